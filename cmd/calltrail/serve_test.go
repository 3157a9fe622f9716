package main

import (
	"bufio"
	"os"
	"os/exec"
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

// TestServeInterrupted: an interrupt is how serve is meant to be stopped,
// so it ends well: exit 0, nothing said.
func TestServeInterrupted(t *testing.T) {
	bin := calltrailBinary(t)
	cmd := exec.Command(bin, "serve", filepath.Join("..", "..", "tracefile", "testdata", "sample.trace"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "calltrail serve: http://") {
		cmd.Process.Kill()
		t.Fatalf("serve said %q, %v", line, err)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil || stderr.Len() > 0 {
		t.Errorf("interrupted: %v, %q; want exit 0 and nothing said", err, stderr.String())
	}
}
