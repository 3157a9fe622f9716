//go:build unix

package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/calltrail/calltrail/export"
	"github.com/calltrail/calltrail/internal/clitest"
	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/internal/tracewrite"
)

// counter counts what is written to it.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// TestMain runs the tests, or, as the parent of a test's command, peak;
// and removes the calltrail command the tests built, if they did.
func TestMain(m *testing.M) {
	if out := os.Getenv("CALLTRAIL_TEST_PEAK"); out != "" {
		os.Exit(peak(out, os.Args[1:]))
	}
	code := m.Run()
	clitest.Cleanup()
	os.Exit(code)
}

// peak runs args as a command, as the parent of a test's command: a
// child of the test process would count the test's own memory as its
// own (Linux's peak resident memory carries over an exec from the
// process that made the child), this one's is small. It writes the
// command's peak resident memory, in bytes, to the file out, and returns
// its exit code.
func peak(out string, args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	rss := int64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) << 10
	if err := os.WriteFile(out, []byte(strconv.FormatInt(rss, 10)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return cmd.ProcessState.ExitCode()
}

// TestDeepEveryVerb takes a trace of a recursion 30,000 calls deep (a
// 300 KB file) through every verb that reads traces: each succeeds within
// 1 GiB of memory, with output of a sensible size, where views quadratic
// in depth wrote gigabytes or ran out of memory. Their time is left to
// go test's limit: a quadratic verb takes minutes. TestHugeInputs does
// the same with inputs a hundred times larger.
func TestDeepEveryVerb(t *testing.T) {
	bin := clitest.Binary(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "deep.out")
	if err := os.WriteFile(trace, tracetest.Recursion(30_000), 0o644); err != nil {
		t.Fatal(err)
	}
	everyVerb(t, bin, trace, 30_000+2, 1<<30, 32<<20)
}

// TestHugeInputs takes hostile inputs through every verb that reads
// traces: a recursion a million calls deep (4 MB), a million goroutines
// of one call each, at most 264 MB for each verb: the 2 GiB allowed for
// ten million, at the same cost a goroutine; and a CPU profile in the
// trace that inflates to a gigabyte. Each verb stays within its memory,
// or refuses in one line.
func TestHugeInputs(t *testing.T) {
	clitest.Long(t)
	if clitest.Race {
		t.Skip("the race detector takes minutes over inputs this large; TestDeepEveryVerb runs")
	}
	bin := clitest.Binary(t)
	dir := t.TempDir()
	deep := filepath.Join(dir, "deep.out")
	if err := os.WriteFile(deep, tracetest.Recursion(1_000_000), 0o644); err != nil {
		t.Fatal(err)
	}
	many := filepath.Join(dir, "goroutines.out")
	f, err := os.Create(many)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	err = tracetest.Goroutines(w, 1_000_000)
	if err == nil {
		err = w.Flush()
	}
	if err := errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
	bomb := filepath.Join(dir, "bomb.out")
	if err := os.WriteFile(bomb, bombTrace(t, 1<<30), 0o644); err != nil {
		t.Fatal(err)
	}
	// The three at once: each verb runs on a core or two, and a verb of
	// the deep trace takes as long as the others' together.
	t.Run("deep", func(t *testing.T) { t.Parallel(); everyVerb(t, bin, deep, 1_000_000+2, 1<<30, 32<<20) })
	t.Run("goroutines", func(t *testing.T) { t.Parallel(); everyVerb(t, bin, many, 1_000_000+1, 64<<20+1_000_000*200, 32<<20) })
	t.Run("bomb", func(t *testing.T) { t.Parallel(); everyVerb(t, bin, bomb, 1000+2, 1<<30, 32<<20) })
}

// bombTrace is a trace of a recursion 1,000 deep with a CPU profile of
// size zero bytes, gzipped: a megabyte for a gigabyte.
func bombTrace(t *testing.T, size int64) []byte {
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for range size >> 20 {
		zw.Write(zeros)
	}
	zw.Close()
	data := tracetest.Recursion(1000)
	var extra bytes.Buffer
	e, err := tracewrite.NewEncoder(&extra, nil)
	if err != nil {
		t.Fatal(err)
	}
	extra.Reset() // the chunk alone, not a second header
	e.Profile("cpu", gz.Bytes())
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	return append(data, extra.Bytes()...)
}

// everyVerb runs every verb that reads traces on trace, and checks that
// each succeeds or refuses in one line, holds at most rss bytes in memory
// (replay at most replayRSS; diff, of the trace with itself, twice rss;
// the views that hold every call they write, Chrome and speedscope, 2 GiB
// for export.MaxCalls calls; no bound under the race detector, which
// takes more), and writes at most out bytes, or, for the views of every
// call (replay, Chrome, speedscope), 200 bytes for each of its calls. The
// trace calls main.main and main.leaf.
func everyVerb(t *testing.T, bin, trace string, calls, rss, out int64) {
	t.Helper()
	dir := t.TempDir()
	o := func(name string) string { return filepath.Join(dir, name) }
	verbs := [][]string{
		{"info", trace},
		{"replay", trace},
		{"report", trace},
		{"report", "--json", trace},
		{"chains", "main.leaf", trace},
		{"chains", "--json", "main.main", trace},
		{"goroutines", trace},
		{"flame", "-o", o("flame.html"), trace},
		{"flame", "--self", "-o", o("self.html"), trace},
		{"flame", "-o", o("flame.svg"), trace},
		{"export", "--format", "pprof", "-o", o("deep.pb.gz"), trace},
		{"export", "--format", "folded", "-o", o("deep.folded"), trace},
		{"export", "--format", "speedscope", "-o", o("deep.speedscope.json"), trace},
		{"export", "--format", "chrome", "-o", o("deep.chrome.json"), trace},
		{"export", "--format", "otlp", "--slower", "1ms", "-o", o("deep.otlp.json"), trace},
		{"diff", trace, trace},
	}
	// Two verbs at a time: most take a core, and each writes files of
	// its own.
	var wg sync.WaitGroup
	running := make(chan struct{}, 2)
	for i, args := range verbs {
		wg.Add(1)
		running <- struct{}{}
		go func() {
			defer func() { <-running; wg.Done() }()
			checkVerb(t, bin, filepath.Join(dir, fmt.Sprintf("peak%d", i)), args, dir, calls, rss, out)
		}()
	}
	wg.Wait()
}

// replayRSS bounds replay's memory in everyVerb, below the others'.
const replayRSS = 384 << 20

// checkVerb runs one verb of everyVerb, and checks it, its peak memory
// written to rssFile.
func checkVerb(t *testing.T, bin, rssFile string, args []string, dir string, calls, rss, out int64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{bin}, args...)...)
	cmd.Env = append(os.Environ(), "CALLTRAIL_TEST_PEAK="+rssFile)
	var stdout counter
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	what := strings.ReplaceAll(strings.Join(args[:len(args)-1], " "), dir+"/", "")
	if err := cmd.Run(); err != nil {
		// A refusal (Chrome and speedscope of more calls than their
		// viewers open, OTLP of more spans than a collector takes)
		// is one line.
		msg := strings.TrimSpace(stderr.String())
		if cmd.ProcessState.ExitCode() != 1 || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "calltrail: ") || strings.Contains(msg, "internal error") {
			t.Errorf("calltrail %s: %v\n%s", what, err, stderr.String())
		}
		return
	}
	size := stdout.n
	for i, a := range args {
		if a == "-o" {
			if info, err := os.Stat(args[i+1]); err == nil {
				size += info.Size()
			}
		}
	}
	data, err := os.ReadFile(rssFile)
	if err != nil {
		t.Error(err)
		return
	}
	peak, _ := strconv.ParseInt(string(data), 10, 64)
	t.Logf("%-40s %8d KB out, %6d MB at most in memory", what, size>>10, peak>>20)
	held := slices.Contains(args, "chrome") || slices.Contains(args, "speedscope")
	if limit := rss; held {
		// They hold the calls they write, at most export.MaxCalls:
		// 2 GiB for as many at most.
		limit = max(rss, 2<<30*calls/export.MaxCalls)
		if peak > limit && !clitest.Race {
			t.Errorf("calltrail %s: %d MB in memory, want at most %d MB", what, peak>>20, limit>>20)
		}
	} else if limit := rss; !clitest.Race {
		if args[0] == "replay" {
			// It keeps 64 MiB of calls, the rest in a file: 197-204
			// MB on the deep trace and on the goroutines' (2026-11-28),
			// and 535 MB on the deep one when each piece of its output
			// copied every open call.
			limit = min(rss, replayRSS)
		}
		if args[0] == "diff" {
			// It analyses two traces, and holds both analyses: on
			// the deep trace, 975-1,035 MB against 554-577 MB for
			// report (2026-11-27).
			limit = 2 * rss
		}
		if peak > limit {
			t.Errorf("calltrail %s: %d MB in memory, want at most %d MB", what, peak>>20, limit>>20)
		}
	}
	if timeline := held || args[0] == "replay"; size > out && (!timeline || size > 200*calls) {
		t.Errorf("calltrail %s: %d MB of output", what, size>>20)
	}
}
