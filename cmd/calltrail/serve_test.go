package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeErrors checks that serve refuses what it cannot serve with one
// line and the right status, before listening.
func TestServeErrors(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "chains.out")
	writeChainsTrace(t, trace, true)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", filepath.Join(dir, "missing.out")}, 1, "no such trace file"},
		{[]string{"serve", trace, filepath.Join(dir, "missing.out")}, 1, "missing.out: no such trace file"},
		{[]string{"serve", trace, trace, trace}, 2, "at most one base trace"},
		{[]string{"serve", "-http", "localhost:99999", trace}, 1, "99999"},
		{[]string{"serve", "-http", "nonsense", trace}, 1, "nonsense"},
	} {
		code, _, stderr := runCmd(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want exit %d with %q on one line", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	garbage := filepath.Join(dir, "garbage.out")
	if err := os.WriteFile(garbage, []byte("not a trace at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd("serve", garbage); code != 1 || !strings.Contains(stderr, "not a calltrail trace") {
		t.Errorf("serve on a file that is not a trace: exit %d, %q", code, stderr)
	}
	// An endless input is refused from its first bytes, not read to the
	// end first.
	if _, err := os.Stat("/dev/zero"); err != nil {
		return
	}
	if code, _, stderr := runCmd("serve", "/dev/zero"); code != 1 || !strings.Contains(stderr, "not a calltrail trace") {
		t.Errorf("serve /dev/zero: exit %d, %q", code, stderr)
	}
}
