package calltrail_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCompiledOut builds testdata/compiledout without the calltrail tag
// and checks, with go tool objdump, that a function carrying the guard
// compiles to exactly the instructions of the same function without it.
func TestCompiledOut(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "compiledout")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/compiledout").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	plain, guarded := disasm(t, bin, "main.plain"), disasm(t, bin, "main.guarded")
	if len(plain) == 0 {
		t.Fatal("no instructions found for main.plain")
	}
	if strings.Join(plain, "\n") != strings.Join(guarded, "\n") {
		t.Errorf("guarded function differs from the plain one:\nplain:\n%s\n\nguarded:\n%s", strings.Join(plain, "\n"), strings.Join(guarded, "\n"))
	}
}

// objdumpLine is "  main.go:12  0x47e0a0  4883ec18  SUBQ $0x18, SP".
var objdumpLine = regexp.MustCompile(`^\s+\S+:\d+\s+0x[0-9a-f]+\s+[0-9a-f]+\s+(.*)$`)

// disasm returns the instructions of fn with addresses made relative to
// its start, so two functions can be compared.
func disasm(t *testing.T, bin, fn string) []string {
	out, err := exec.Command("go", "tool", "objdump", "-s", "^"+regexp.QuoteMeta(fn)+"$", bin).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	var ins []string
	var start string
	addr := regexp.MustCompile(`0x[0-9a-f]{5,}`)
	pcrel := regexp.MustCompile(`-?0x[0-9a-f]+\(IP\)`) // distance to data differs by position
	for _, l := range strings.Split(string(out), "\n") {
		m := objdumpLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		fields := strings.Fields(l)
		if start == "" {
			start = fields[1]
		}
		// Jumps within the function name absolute addresses; calls name
		// other functions. Keep the shape, drop the address.
		in := addr.ReplaceAllString(m[1], "ADDR")
		in = pcrel.ReplaceAllString(in, "OFF(IP)")
		in = strings.ReplaceAll(in, fn+"(SB)", "SELF(SB)")
		ins = append(ins, strings.TrimSpace(in))
	}
	return ins
}
