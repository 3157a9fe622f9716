package calltrail_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
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

// TestHotPathCalls checks what the hot path calls, in its machine code.
// Between reading the P a goroutine runs on and writing the event in
// that P's ring, the goroutine must not move to another P: enter and
// exitErr are nosplit, never preempted in their own code, and what they
// call there must be too (assembly, the runtime's nosplit functions); a
// call of any other function must be one of the slow paths, which pin the goroutine
// themselves. A change of the compiler's inlining that turned a helper
// into a call would break that unseen: the test names it.
func TestHotPathCalls(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the allowed calls are those of amd64")
	}
	bin := filepath.Join(t.TempDir(), "compiledout")
	if out, err := exec.Command("go", "build", "-tags", "calltrail", "-o", bin, "./testdata/compiledout").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	const pkg, readP = "github.com/calltrail/calltrail.", "github.com/calltrail/calltrail/internal/gstate.readP.abi0"
	allowed := map[string]bool{
		// Assembly and nosplit functions, safe on the hot path.
		readP:              true, // the goroutine, its P, the time
		"runtime.nanotime": true, // the time, without a cycle counter
		// Before the P is read, or the slow paths after it.
		pkg + "(*tracer).register":   true,
		pkg + "stampSlow":            true,
		pkg + "(*tracer).enterFirst": true,
		pkg + "(*tracer).enterClaim": true,
		pkg + "exitKind":             true,
		pkg + "(*tracer).exitClaim":  true,
		pkg + "(*tracer).left":       true,
	}
	call := regexp.MustCompile(`^CALL (\S+)\(SB\)$`)
	for _, fn := range []string{pkg + "(*tracer).enter", pkg + "(*tracer).exitErr"} {
		ins := disasm(t, bin, fn)
		if len(ins) == 0 {
			t.Fatalf("no instructions found for %s", fn)
		}
		readsP := false
		for _, in := range ins {
			m := call.FindStringSubmatch(in)
			if m == nil {
				continue
			}
			readsP = readsP || m[1] == readP
			// runtime.panicBounds, or panicIndex and the like before
			// go1.26: a failed bounds check, which does not return.
			if !allowed[m[1]] && !strings.HasPrefix(m[1], "runtime.panic") {
				t.Errorf("%s calls %s, which may let the goroutine move to another P", fn, m[1])
			}
		}
		if !readsP {
			t.Errorf("%s does not read its P with gstate.readP", fn)
		}
	}
}
