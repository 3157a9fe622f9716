//go:build unix

package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/internal/clitest"
	"github.com/calltrail/calltrail/tracefile"
)

// The programs of testdata/exact put calltrail where real code and real
// load put it: every core calling, other processes keeping the machine
// busy, a panic through ten thousand frames, a test asserting that a
// helper allocates nothing. Each runs through the calltrail command as a
// user runs it, with default settings.

// exact runs the calltrail command in testdata/exact and returns its
// standard error, failing the test if it fails.
func exact(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(clitest.Binary(t), args...)
	cmd.Dir = filepath.Join("testdata", "exact")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("calltrail %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stderr.String()
}

// exactSummary reads a trace the way info does, failing the test on any
// error.
func exactSummary(t *testing.T, path string) tracefile.Summary {
	t.Helper()
	s := readSummary(t, path)
	if s.End != "main returned" {
		t.Errorf("trace ended with %q, want main returned", s.End)
	}
	return s
}

// TestFirehoseEveryCore runs twice as many goroutines as cores, each
// calling flat out: with default settings every call is in the trace, and
// the time the goroutines waited for the writer is said.
func TestFirehoseEveryCore(t *testing.T) {
	g := 2 * runtime.GOMAXPROCS(0)
	const n = 2_000_000
	trace := filepath.Join(t.TempDir(), "firehose.out")
	stderr := exact(t, "run", "-o", trace, "./firehose", "-g", strconv.Itoa(g), "-n", strconv.Itoa(n))
	s := exactSummary(t, trace)
	if want := uint64(g*n + g + 1); s.Calls != want || s.Stats.DroppedCalls != 0 {
		t.Errorf("%d calls recorded, %d dropped; want %d, none dropped", s.Calls, s.Stats.DroppedCalls, want)
	}
	if s.Stats.Waits > 0 && !strings.Contains(stderr, "held up") {
		t.Errorf("the run's summary does not say the program was held up:\n%s", stderr)
	}
	// The waits are in the trace, where they happened, and left out of
	// the calls they happened in: the goroutines' outermost calls hold
	// all but the few that came before any call or while noting one.
	held := heldInCalls(t, trace)
	t.Logf("calls held up %v; the run %v in %d waits", time.Duration(held), time.Duration(s.Stats.HeldNs), s.Stats.Waits)
	if s.Stats.Waits > 0 && (held < int64(s.Stats.HeldNs)/2 || held > int64(s.Stats.HeldNs)*11/10) {
		t.Errorf("the calls were held up %v, the run %v in %d waits", time.Duration(held), time.Duration(s.Stats.HeldNs), s.Stats.Waits)
	}
}

// heldInCalls is the time the goroutines' outermost calls in the trace at path
// were held up by the trace writer, each call's wall time less its
// Duration.
func heldInCalls(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := tracefile.NewReader(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	var held int64
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return held
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == tracefile.ExitEvent && ev.Depth == 1 {
			held += ev.Time - ev.Start - int64(ev.Duration())
		}
	}
}

// TestBusyMachine traces a program while two other processes keep every
// core of a two-core machine busy: the writer gets no core of its own,
// and no call is lost.
func TestBusyMachine(t *testing.T) {
	for i := 0; i < 2; i++ {
		hog := exec.Command("yes")
		if err := hog.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	}
	trace := filepath.Join(t.TempDir(), "fib.out")
	exact(t, "run", "-o", trace, "./fib", "27")
	s := exactSummary(t, trace)
	if want := uint64(2*317811 - 1 + 1); s.Calls != want || s.Stats.DroppedCalls != 0 {
		t.Errorf("%d calls recorded, %d dropped; want %d (fib(27) and main), none dropped", s.Calls, s.Stats.DroppedCalls, want)
	}
	checkAnswers(t, trace)
}

// TestDeepPanicProgram parses five inputs nested ten thousand deep, each
// failing by a panic at the bottom recovered at the top. It runs in the
// test's time limit only if exits during the panic cost what they cost
// outside one: each walking the stack made it quadratic.
func TestDeepPanicProgram(t *testing.T) {
	const depth, rounds = 10_000, 5
	trace := filepath.Join(t.TempDir(), "deeppanic.out")
	exact(t, "run", "-o", trace, "./deeppanic", "-depth", strconv.Itoa(depth), "-rounds", strconv.Itoa(rounds))
	s := exactSummary(t, trace)
	// Each round: parse, its deferred closure, value for each of the
	// depth lists and the number inside, each list left by the panic,
	// and the error's Error method, called by fmt.Println.
	if want := uint64(1 + rounds*(depth+4)); s.Calls != want || s.Panics != rounds*depth || s.Stats.DroppedCalls != 0 {
		t.Errorf("%d calls, %d left by panic, %d dropped; want %d, %d, none", s.Calls, s.Panics, s.Stats.DroppedCalls, want, rounds*depth)
	}
	checkAnswers(t, trace)
}

// TestAllocsUnchanged runs a test asserting that a helper allocates
// nothing, which holds only while the compiler inlines the helper: under
// calltrail test it passes as under go test, because calltrail keeps
// inlined the helper whose inlining keeps its value off the heap; with
// --inlined it fails, as it should.
func TestAllocsUnchanged(t *testing.T) {
	traces := t.TempDir()
	exact(t, "test", "-o", traces, "-count=1", "./allocs")
	s := readSummary(t, filepath.Join(traces, "allocs.test.trace"))
	if s.Calls == 0 || s.Stats.DroppedCalls != 0 {
		t.Errorf("%d calls recorded, %d dropped", s.Calls, s.Stats.DroppedCalls)
	}
	// The trace says the helper was kept inlined, and why; Norm, which
	// inlines it and allocates nothing, is traced.
	tr, err := (&session{out: io.Discard, errOut: io.Discard}).load(filepath.Join(traces, "allocs.test.trace"), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const helper = "example.com/exact/allocs.add"
	if why := tr.Outside(helper); !strings.Contains(why, "kept inlined") || !strings.Contains(why, "allocs.go:9: &vec{...} escapes to heap") {
		t.Errorf("%s: %q, want it kept inlined for its &vec{...}", helper, why)
	}
	if _, err := tr.Func("example.com/exact/allocs.Norm"); err != nil {
		t.Error(err)
	}
	cmd := exec.Command(clitest.Binary(t), "test", "-o", t.TempDir(), "-count=1", "--inlined", "./allocs")
	cmd.Dir = filepath.Join("testdata", "exact")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Norm allocates 1 times a call") {
		t.Errorf("with --inlined, the helper's allocation should show: %v\n%s", err, out)
	}
}
