package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

var update = flag.Bool("update", false, "rewrite golden files")

// writeChainsTrace writes the call chains of the seed, A1->B1->C1->D in
// goroutine 1 and A2->B2->C2->D in goroutine 7 (started by goroutine 1),
// with times in nanoseconds. It returns the file's bytes.
func writeChainsTrace(t *testing.T, path string, end bool) []byte {
	t.Helper()
	return writeChainsVariant(t, path, end, false)
}

// writeChainsVariant writes writeChainsTrace's trace, or with changed set
// a later version of the program: its first D four times slower, and no
// goroutine 7.
func writeChainsVariant(t *testing.T, path string, end, changed bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	e, err := tracewrite.NewEncoder(&buf, map[string]string{
		"program": "chains", "path": "/tmp/chains", "go": "go1.26.8", "goos": "linux", "goarch": "amd64",
		"gomaxprocs": "2", "start": "2026-11-21T10:00:00Z", "clock": "monotonic", "goid": "g", "parents": "true",
	})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"main.main", "main.A1", "main.B1", "main.C1", "main.D", "main.A2", "main.B2", "main.C2", "main.main.func1"}
	var fs []tracefile.Func
	for i, n := range names {
		fs = append(fs, tracefile.Func{Name: n, File: "main.go", Line: 10 * (i + 1)})
	}
	e.Clock(0, 0)
	e.Funcs(1, fs)
	var b tracewrite.Batch
	at := int64(0)
	step := func(d time.Duration) int64 { at += int64(d); return at }
	b.Enter(1, 1, step(0))
	for _, id := range []uint32{2, 3, 4, 5} {
		b.Enter(1, id, step(time.Microsecond))
	}
	if changed {
		b.Exit(1, tracefile.Return, step(5000*time.Microsecond))
	} else {
		b.Exit(1, tracefile.Return, step(1250*time.Microsecond))
	}
	for range 3 {
		b.Exit(1, tracefile.Return, step(1250*time.Microsecond))
	}
	if !changed {
		b.Goroutine(tracefile.Goroutine{ID: 7, Parent: 1, CreatorFunc: 1, CreatorLine: 15, StartFunc: 9}, step(time.Microsecond))
		b.Enter(7, 9, at)
		for _, id := range []uint32{6, 7, 8, 5} {
			b.Enter(7, id, step(time.Microsecond))
		}
		b.Exit(7, tracefile.Panic, step(20*time.Microsecond))
		for range 3 {
			b.Exit(7, tracefile.Panic, step(time.Microsecond))
		}
		b.Exit(7, tracefile.Return, step(time.Microsecond))
	}
	b.Exit(1, tracefile.Return, step(time.Millisecond))
	e.Clock(at, at)
	e.Events(&b)
	e.Stats(tracefile.Stats{Calls: 10, DroppedCalls: 1, Flushes: 1})
	if end {
		e.End("main returned", time.Unix(0, 0))
	}
	e.Flush()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func runCmd(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	tracetest.Golden(t, name, got, *update)
}

func TestReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chains.out")
	writeChainsTrace(t, path, true)
	tests := []struct {
		golden string
		args   []string
	}{
		{"replay.golden", nil},
		{"replay-g7.golden", []string{"-g", "7"}},
		{"replay-F.golden", []string{"-F", `^main\.B`}},
		{"replay-N.golden", []string{"-N", `^main\.(B1|A2)$`}},
		{"replay-D.golden", []string{"-D", "2"}},
		{"replay-t.golden", []string{"-t", "1ms"}},
		{"replay-parents.golden", []string{"-parents", "-D", "1"}},
		{"replay-window.golden", []string{"-window", "1ms-5.02ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			code, out, errOut := runCmd(append(append([]string{"replay"}, tt.args...), path)...)
			// The trace has a dropped call, which replay cannot show.
			if want := "calltrail: warning: " + path + ": 1 call was dropped while recording (buffers full); figures leave them out\n"; code != 0 || errOut != want {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			golden(t, tt.golden, out)
		})
	}
}

func TestInfo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chains.out")
	data := writeChainsTrace(t, path, true)
	code, out, errOut := runCmd("info", path)
	if want := "calltrail: warning: " + path + ": 1 call was dropped while recording (buffers full); figures leave them out\n"; code != 0 || errOut != want {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	out = strings.ReplaceAll(out, path, "FILE")
	for _, want := range []string{
		"program     /tmp/chains",
		"go          go1.26.8 linux/amd64, GOMAXPROCS 2",
		"goroutines  2\n",
		"functions   9 called, of 9 in the trace's table\n",
		"calls       10 (4 left by panic, 0 unfinished)",
		"dropped     1 call (9.09%)",
		"ended       main returned",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "size        "+strconv.Itoa(len(data))+" bytes") {
		t.Errorf("info does not give the file size %d:\n%s", len(data), out)
	}
}

// TestDefaultTrace: a verb not given a trace reads CALLTRAIL_OUT, where
// a traced program writes it, unless that names a directory; then
// calltrail.out.
func TestDefaultTrace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "env.out")
	writeChainsTrace(t, path, true)
	wd, _ := os.Getwd()
	os.Chdir(t.TempDir()) // no calltrail.out here
	t.Cleanup(func() { os.Chdir(wd) })
	t.Setenv("CALLTRAIL_OUT", path)
	for _, verb := range []string{"info", "replay", "report"} {
		if code, out, errOut := runCmd(verb); code != 0 || out == "" {
			t.Errorf("%s with CALLTRAIL_OUT=%s: exit %d, stderr %q", verb, path, code, errOut)
		}
	}
	for _, env := range []string{dir, dir + "/"} {
		t.Setenv("CALLTRAIL_OUT", env)
		if code, _, errOut := runCmd("info"); code != 1 || !strings.Contains(errOut, "calltrail.out: no such trace file") {
			t.Errorf("info with CALLTRAIL_OUT=%s: exit %d, stderr %q; want calltrail.out not found", env, code, errOut)
		}
	}
}

// TestBadFiles checks every unusable file gets one line on stderr and
// exit status 1, from every command that reads traces.
func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	good := writeChainsTrace(t, filepath.Join(dir, "good.out"), true)
	files := map[string][]byte{
		"empty.out":     {},
		"foreign.out":   []byte("#!/bin/sh\necho this is not a trace\n"),
		"newer.out":     append([]byte(tracefile.Magic), 9),
		"truncated.out": good[:len(good)-10],
	}
	for name, data := range files {
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	tests := []struct{ file, want string }{
		{"missing.out", "no such trace file"},
		{"empty.out", "trace file is empty"},
		{"foreign.out", "not a calltrail trace"},
		{"newer.out", "format version 9 is newer"},
		{"truncated.out", "trace is truncated"},
	}
	for _, verb := range []string{"replay", "info"} {
		for _, tt := range tests {
			t.Run(verb+"/"+tt.file, func(t *testing.T) {
				code, out, errOut := runCmd(verb, filepath.Join(dir, tt.file))
				if code != 1 {
					t.Errorf("exit status %d, want 1", code)
				}
				// What info shows of a damaged trace says it was read
				// up to the damage, not whole.
				if verb == "info" && tt.file == "truncated.out" && !strings.Contains(out, "read        every event up to the damage") {
					t.Errorf("info of a truncated trace:\n%s", out)
				}
				if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "calltrail: ") || !strings.Contains(errOut, tt.want) {
					t.Errorf("stderr %q, want one line saying %q", errOut, tt.want)
				}
				if strings.Contains(errOut, "goroutine ") {
					t.Errorf("a Go panic trace: %s", errOut)
				}
			})
		}
	}
}

// TestNoEnd checks a trace without an end record (a killed program) is
// shown whole, with a warning, and exit status 0.
func TestNoEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "killed.out")
	writeChainsTrace(t, path, false)
	code, out, errOut := runCmd("replay", path)
	if code != 0 || !strings.Contains(errOut, "no end record") || !strings.Contains(out, "<-main.main ") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
}

func TestUsage(t *testing.T) {
	if code, _, errOut := runCmd("frobnicate"); code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCmd("replay", "-F", "(", "x"); code != 2 || !strings.Contains(errOut, "-F:") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("bad regexp: exit %d, %q", code, errOut)
	}
	// A flag mistyped: one line that says which, the flag meant where
	// one is near, and where the flags are listed, not the whole usage.
	if code, _, errOut := runCmd("report", "--jsn", "x"); code != 2 || errOut != "calltrail report: flag provided but not defined: -jsn (did you mean --json? calltrail report -h lists its flags)\n" {
		t.Errorf("flag mistyped: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCmd("chains", "--zzz", "x"); code != 2 || errOut != "calltrail chains: flag provided but not defined: -zzz (calltrail chains -h lists its flags)\n" {
		t.Errorf("unknown flag: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCmd("replay", "a", "b"); code != 2 || !strings.Contains(errOut, "want one trace file") {
		t.Errorf("two files: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCmd("help", "replay"); code != 0 || !strings.Contains(errOut, "usage: calltrail replay") || !strings.Contains(errOut, "-F REGEX") {
		t.Errorf("help replay: exit %d, %q", code, errOut)
	}
}

// TestCommandLineHabits checks what Go developers expect of a command:
// a version, flags after the file, an error for a goroutine that is not
// there, and one line, not a Go panic trace, for a bug.
func TestCommandLineHabits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chains.out")
	writeChainsTrace(t, path, true)

	for _, args := range [][]string{{"version"}, {"-version"}, {"--version"}} {
		code, out, _ := runCmd(args...)
		if code != 0 || !strings.HasPrefix(out, "calltrail ") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("%s: exit %d, %q", args[0], code, out)
		}
	}

	_, before, _ := runCmd("report", "--top", "2", "--json", path)
	code, after, stderr := runCmd("report", path, "--top", "2", "--json")
	if code != 0 || after != before || !strings.HasPrefix(after, "{") {
		t.Errorf("flags after the file: exit %d, %s\n%s\nwant\n%s", code, stderr, after, before)
	}
	if code, _, stderr := runCmd("replay", path, "-D"); code != 2 || !strings.Contains(stderr, "flag needs an argument") {
		t.Errorf("flag without its value after the file: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCmd("replay", "--", "-D"); code != 1 || !strings.Contains(stderr, "-D: no such trace file") {
		t.Errorf("a file named after --: exit %d, %s", code, stderr)
	}

	// The trace without the function: said so, not read as a function
	// of calltrail.out.
	if code, _, stderr := runCmd("chains", path); code != 2 || !strings.Contains(stderr, "name the function before the trace") {
		t.Errorf("chains FILE: exit %d, %s", code, stderr)
	}
	// The two the other way round: said so, with the function named.
	if code, _, stderr := runCmd("chains", path, "main.D"); code != 2 || !strings.Contains(stderr, "name the function before the trace, e.g. calltrail chains main.D "+path) {
		t.Errorf("chains FILE FUNC: exit %d, %s", code, stderr)
	}
	// A file that is no trace, such as a program named as the pattern
	// asked for, leaves the pattern a pattern.
	binary := filepath.Join(t.TempDir(), "gojq")
	if err := os.WriteFile(binary, []byte("\x7fELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, stderr := runCmd("chains", binary); strings.Contains(stderr, "name the function before the trace") {
		t.Errorf("chains of a program's name: %s", stderr)
	}
	// -o - is standard output, as most tools read it, not a file
	// named "-".
	for _, args := range [][]string{
		{"export", "--format", "folded", "-o", "-", path},
		{"flame", "-o", "-", path},
	} {
		code, stdout, stderr := runCmd(args...)
		if code != 0 || !strings.Contains(stdout, "main.D") {
			t.Errorf("%v: exit %d, %s, %d bytes out", args, code, stderr, len(stdout))
		}
		if _, err := os.Stat("-"); err == nil {
			t.Errorf("%v wrote a file named -", args)
			os.Remove("-")
		}
	}

	// Values out of range are refused before any work, not read as
	// "all" or "the whole window".
	for _, args := range [][]string{
		{"report", "--top", "-3", path},
		{"goroutines", "--top", "-1", path},
		{"chains", "--slowest", "-1", "main.D", path},
		{"record", "--last", "-1s", "localhost:1"},
		{"record", "--last", "0s", "localhost:1"},
		{"record", "--seconds", "0", "localhost:1"},
		{"record", "--seconds", "1", "--last", "1s", "localhost:1"},
	} {
		if code, _, stderr := runCmd(args...); code != 2 {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	for _, verb := range []string{"replay", "report", "goroutines", "diff", "chains", "flame", "flame-html", "pprof", "folded", "chrome"} {
		args := []string{verb, "-g", "999", path}
		switch verb {
		case "chains":
			args = []string{verb, "-g", "999", "main.D", path}
		case "flame":
			args = []string{verb, "-g", "999", "-o", out + ".svg", path}
		case "flame-html":
			args = []string{"flame", "-g", "999", "-o", out + ".html", path}
		case "diff":
			args = []string{verb, "-g", "999", path, path}
		case "pprof", "folded", "chrome":
			args = []string{"export", "--format", verb, "-g", "999", "-o", out, path}
		}
		code, stdout, stderr := runCmd(args...)
		if code != 1 || !strings.Contains(stderr, "no traced call ran in goroutine 999 (calltrail replay shows the goroutine of each call, as g[ID])") {
			t.Errorf("%s -g 999: exit %d, %q", verb, code, stderr)
		}
		if stdout != "" {
			t.Errorf("%s -g 999 printed a view: %q", verb, stdout)
		}
		// An error, not an empty view: no file is written.
		if written, _ := filepath.Glob(out + "*"); len(written) > 0 {
			t.Errorf("%s -g 999 wrote %v", verb, written)
			for _, f := range written {
				os.Remove(f)
			}
		}
	}
	// Filters that leave out every call, a window past the end or -N .,
	// make no view, graph nor export: an error says so.
	for _, args := range [][]string{
		{"flame", "-window", "1h-", "-o", out + ".svg", path},
		{"export", "--format", "folded", "-N", ".", "-o", out, path},
		{"export", "--format", "pprof", "-window", "1h-", "-o", out, path},
		{"report", "-window", "1h-", path},
		{"chains", "-window", "1h-", "main.D", path},
		{"replay", "-window", "1h-", path},
		{"goroutines", "-window", "1h-", path},
	} {
		want := "the filters leave out every one of its"
		if slices.Contains(args, "1h-") {
			want = "-window starts at 1h0m0s, past the end of the trace at "
		}
		if code, stdout, stderr := runCmd(args...); code != 1 || !strings.Contains(stderr, want) || stdout != "" {
			t.Errorf("%v: exit %d, %q, %q; want exit 1 saying %q", args, code, stdout, stderr, want)
		}
		if written, _ := filepath.Glob(out + "*"); len(written) > 0 {
			t.Errorf("%v wrote %v", args, written)
			for _, f := range written {
				os.Remove(f)
			}
		}
	}
	if code, out, stderr := runCmd("replay", "-g", "7", path); code != 0 || strings.Contains(stderr, "goroutine") || !strings.Contains(out, "main.A2") {
		t.Errorf("replay -g 7: exit %d, %q, %q", code, stderr, out)
	}

	verbs["crash"] = &verb{name: "crash", run: func(_ *session, _ *flag.FlagSet, args []string) error {
		var none []int
		return fmt.Errorf("%d", none[len(args)])
	}}
	defer delete(verbs, "crash")
	code, _, stderr = runCmd("crash")
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "calltrail: internal error: runtime error: index out of range [0] with length 0") {
		t.Errorf("a bug: exit %d, %q", code, stderr)
	}
}

// countingWriter counts the writes made to it.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// TestOutputBuffered checks that the verbs write their output in a few
// large writes, not a line at a time: on a terminal or a pipe, a report of
// a million functions written a line at a time costs more than its
// analysis.
func TestOutputBuffered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.out")
	writeChainsTrace(t, path, true)
	for _, verb := range []string{"replay", "report", "goroutines", "info"} {
		var o countingWriter
		var e bytes.Buffer
		if code := run([]string{verb, path}, &o, &e); code != 0 {
			t.Fatalf("%s: exit %d: %s", verb, code, e.String())
		}
		if lines := strings.Count(o.String(), "\n"); lines < 3 || o.writes != 1 {
			t.Errorf("%s wrote %d lines in %d writes, want one write", verb, lines, o.writes)
		}
	}
}

// fullDisk is an output that takes nothing, as a full disk does.
type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestOutputNotWritten checks that every verb that writes to standard
// output fails, saying why, when the output cannot be written, rather
// than exit 0 having written nothing.
func TestOutputNotWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chains.out")
	writeChainsTrace(t, path, true)
	for _, args := range [][]string{
		{"report", path}, {"report", "--json", path}, {"chains", "main.D", path}, {"goroutines", path},
		{"info", path}, {"info", "--scan", path}, {"replay", path}, {"diff", path, path}, {"spans", path},
		{"export", "--format", "pprof", path}, {"export", "--format", "folded", path}, {"export", "--format", "chrome", path},
	} {
		var e bytes.Buffer
		code := run(args, fullDisk{}, &e)
		last := e.String()[strings.LastIndex(strings.TrimSuffix(e.String(), "\n"), "\n")+1:] // after the warning of the dropped call
		if code != 1 || !strings.HasPrefix(last, "calltrail: ") || !strings.Contains(last, "no space left on device") || strings.Contains(e.String(), "panic") {
			t.Errorf("%v to a full disk: exit %d, %q; want exit 1 and one line saying so", args[:len(args)-1], code, e.String())
		}
	}
}

// TestBinaryNotToTerminal: a pprof export, which is binary, is not
// written to a terminal; to a file or a pipe it is.
func TestBinaryNotToTerminal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chains.out")
	writeChainsTrace(t, path, true)
	for _, tty := range []bool{true, false} {
		var o, e bytes.Buffer
		code := (&session{out: &o, errOut: &e, outTerminal: tty}).run([]string{"export", "--format", "pprof", path})
		switch {
		case tty && (code != 2 || o.Len() != 0 || !strings.Contains(e.String(), "not for a terminal")):
			t.Errorf("to a terminal: exit %d, %d bytes written, %q; want exit 2, nothing written", code, o.Len(), e.String())
		case !tty && (code != 0 || o.Len() == 0):
			t.Errorf("to a pipe: exit %d, %d bytes written, %q", code, o.Len(), e.String())
		}
	}
}
