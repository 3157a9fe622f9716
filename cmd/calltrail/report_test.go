package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/internal/tracetest"
)

func TestReportAndChains(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chains.out")
	writeChainsTrace(t, path, true)
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"report.golden", []string{"report"}},
		{"report-calls.golden", []string{"report", "--sort", "calls", "--top", "3"}},
		{"report-json.golden", []string{"report", "--json"}},
		{"chains-D.golden", []string{"chains", "main.D"}},
		{"chains-D-json.golden", []string{"chains", "--json", "main.D"}},
		{"chains-regexp.golden", []string{"chains", "--slowest", "0", `^main\.C`}},
		{"chains-panics.golden", []string{"chains", "--panics", "main.D"}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			code, stdout, stderr := runCmd(append(tt.args, path)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden(t, tt.golden, stdout)
			// A pattern that matched several functions says which;
			// a name says nothing more.
			several := tt.golden == "chains-regexp.golden"
			if want := "calltrail: ^main\\.C matches 2 functions: main.C1, main.C2 ("; several != strings.Contains(stderr, " matches ") || several && !strings.Contains(stderr, want) {
				t.Errorf("stderr %q", stderr)
			}
		})
	}
	var rep struct {
		Functions []map[string]any `json:"functions"`
	}
	_, stdout, _ := runCmd("report", "--json", path)
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Functions) != 9 {
		t.Fatalf("report --json: %v, %d functions", err, len(rep.Functions))
	}
	for _, key := range []string{"name", "calls", "total_ns", "self_ns", "mean_ns", "p50_ns", "p99_ns", "max_ns", "panics"} {
		if _, ok := rep.Functions[0][key]; !ok {
			t.Errorf("report --json lacks %q", key)
		}
	}
	code, _, stderr := runCmd("chains", "main.E", path)
	if code != 1 || !strings.Contains(stderr, `no function "main.E" in the trace; closest: main.D`) {
		t.Errorf("unknown function: exit %d, %q", code, stderr)
	}
}

func TestDiffCommand(t *testing.T) {
	dir := t.TempDir()
	base, cur := filepath.Join(dir, "base.out"), filepath.Join(dir, "new.out")
	writeChainsTrace(t, base, true)
	writeChainsVariant(t, cur, true, true)
	code, stdout, stderr := runCmd("diff", "--top", "4", base, cur)
	if code != 0 {
		t.Fatal(stderr)
	}
	golden(t, "diff.golden", stdout)
	// A trace against itself: nothing changed, which is what is said.
	if code, stdout, stderr := runCmd("diff", base, base); code != 0 || !strings.HasPrefix(stdout, "no change") || strings.Count(stdout, "\n") != 1 {
		t.Errorf("diff of a trace with itself: exit %d, %q, %q", code, stdout, stderr)
	}
	if code, _, stderr := runCmd("diff", base); code != 2 || !strings.Contains(stderr, "BASE NEW") {
		t.Errorf("one trace: exit %d, %q", code, stderr)
	}
}

// TestDiffOfOtherPrograms: diff and flame --diff warn when the traces
// are of different programs, by their main packages, and compare them
// all the same; of one program, they say nothing.
func TestDiffOfOtherPrograms(t *testing.T) {
	dir := t.TempDir()
	write := func(name, pkg string) string {
		data, err := tracetest.Build("meta package " + pkg + "\n1 +main.main 0\n1 +main.work 10\n1 - 20\n1 - 30\n")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, a2, b := write("a.out", "example.com/a"), write("a2.out", "example.com/a"), write("b.out", "example.com/b")
	const warning = "warning: the traces are of different programs, example.com/a and example.com/b"
	for _, args := range [][]string{{"diff", a, b}, {"flame", "--diff", a, "-o", filepath.Join(dir, "d.svg"), b}} {
		if code, _, stderr := runCmd(args...); code != 0 || !strings.Contains(stderr, warning) {
			t.Errorf("%v: exit %d, %q; want exit 0 and %q", args[:2], code, stderr, warning)
		}
	}
	if code, _, stderr := runCmd("diff", a, a2); code != 0 || stderr != "" {
		t.Errorf("diff of one program's traces: exit %d, %q", code, stderr)
	}
}

// TestReportIncomplete checks a cut trace and one with dropped calls are
// analysed up to what is there, with a warning saying what is missing.
// TestDamagePolicy checks that every verb treats damaged traces alike: a
// trace cut short is read up to the cut, its output shown, the cut said
// in one line, and the exit status 1; a trace without an end record is
// read whole, with a warning, and the exit status 0.
func TestDamagePolicy(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full.out")
	data := writeChainsTrace(t, full, true)
	cut := filepath.Join(dir, "cut.out")
	if err := os.WriteFile(cut, data[:len(data)-20], 0o644); err != nil {
		t.Fatal(err)
	}
	noEnd := filepath.Join(dir, "noend.out")
	writeChainsTrace(t, noEnd, false)
	out := filepath.Join(dir, "out")
	for _, args := range [][]string{
		{"info"}, {"replay"}, {"report"}, {"chains", "main.D"}, {"goroutines"},
		{"flame", "-o", out + ".svg"}, {"export", "--format", "folded"}, {"export", "--format", "pprof", "-o", out},
		{"export", "--format", "chrome"}, {"export", "--format", "speedscope"}, {"diff", full},
	} {
		code, stdout, stderr := runCmd(append(args, cut)...)
		last := stderr[strings.LastIndex(strings.TrimSuffix(stderr, "\n"), "\n")+1:]
		if code != 1 || !strings.Contains(last, cut+": trace is truncated") || !strings.Contains(last, "the output shows what came before") {
			t.Errorf("%s on a cut trace: exit %d, stderr %q; want exit 1, the cut said last", args[0], code, stderr)
		}
		if stdout == "" && !slices.Contains(args, "-o") {
			t.Errorf("%s on a cut trace: no output", args[0])
		}
		code, _, stderr = runCmd(append(args, noEnd)...)
		if code != 0 || !strings.Contains(stderr, "no end record") {
			t.Errorf("%s on a trace without an end: exit %d, stderr %q; want exit 0 and a warning", args[0], code, stderr)
		}
	}
	// The full trace counts one dropped call.
	if _, _, stderr := runCmd("chains", "main.D", full); !strings.Contains(stderr, "1 call was dropped while recording") {
		t.Errorf("no warning about dropped calls: %q", stderr)
	}
}

func TestGoroutines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chains.out")
	writeChainsTrace(t, path, true)
	for _, tt := range []struct{ golden, flag string }{{"goroutines.golden", ""}, {"goroutines-json.golden", "--json"}} {
		args := []string{"goroutines", path}
		if tt.flag != "" {
			args = []string{"goroutines", tt.flag, path}
		}
		code, out, _ := runCmd(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		golden(t, tt.golden, out)
	}
}

func TestFlameWeightWithoutProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chains.out")
	writeChainsTrace(t, path, true)
	for _, flag := range []string{"--cpu", "--wait"} {
		code, out, errOut := runCmd("flame", flag, path)
		lines := strings.Split(strings.TrimSpace(errOut), "\n") // a warning of the dropped call, then the error
		if code != 1 || out != "" || !strings.Contains(lines[len(lines)-1], "has no CPU profile") {
			t.Errorf("flame %s on a trace without profiles: exit %d, stdout %d bytes, stderr %q", flag, code, len(out), errOut)
		}
	}
	if code, _, errOut := runCmd("flame", "--cpu", "--wait", path); code != 2 {
		t.Errorf("flame --cpu --wait: exit %d, stderr %q", code, errOut)
	}
}
