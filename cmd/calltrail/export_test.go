package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/query"
	"github.com/google/pprof/profile"
)

// TestExportPprof reads the profile back with the pprof package and with
// go tool pprof, and checks both agree with calltrail report.
func TestExportPprof(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "chains.out")
	writeChainsTrace(t, trace, true)
	out := filepath.Join(dir, "chains.pb.gz")
	if code, _, stderr := runCmd("export", "--format", "pprof", "-o", out, trace); code != 0 {
		t.Fatal(stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := profile.Parse(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := prof.CheckValid(); err != nil {
		t.Fatal(err)
	}
	// Self time per function, from the samples and from the report.
	flat := map[string]int64{}
	gs := map[int64]bool{}
	for _, s := range prof.Sample {
		flat[s.Location[0].Line[0].Function.Name] += s.Value[1]
		gs[s.NumLabel["goroutine"][0]] = true
	}
	var rep struct{ Functions []query.Function }
	_, stdout, _ := runCmd("report", "--json", trace)
	json.Unmarshal([]byte(stdout), &rep)
	for _, fn := range rep.Functions {
		if flat[fn.Name] != fn.SelfNs {
			t.Errorf("%s: pprof self %d, report %d", fn.Name, flat[fn.Name], fn.SelfNs)
		}
	}
	if !gs[1] || !gs[7] || len(gs) != 2 {
		t.Errorf("goroutine labels %v, want 1 and 7", gs)
	}
	// go tool pprof -top shows the same flat and cumulative times, as
	// its default view: wall time, not the last sample type.
	top, err := exec.Command("go", "tool", "pprof", "-top", "-nodefraction=0", "-edgefraction=0", "-unit=ns", out).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, top)
	}
	if !strings.Contains(string(top), "Type: wall") {
		t.Errorf("go tool pprof -top does not show wall time by default:\n%s", top)
	}
	for _, fn := range rep.Functions {
		want := strconv.FormatInt(fn.SelfNs, 10) + "ns"
		wantCum := strconv.FormatInt(fn.TotalNs, 10) + "ns"
		found := false
		for _, line := range strings.Split(string(top), "\n") {
			fields := strings.Fields(line)
			if len(fields) == 6 && fields[5] == fn.Name {
				found = fields[0] == want && fields[3] == wantCum
			}
		}
		if !found {
			t.Errorf("go tool pprof -top does not show %s with flat %s, cum %s:\n%s", fn.Name, want, wantCum, top)
		}
	}
}

func TestExportFolded(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "chains.out")
	writeChainsTrace(t, trace, true)
	code, stdout, stderr := runCmd("export", "--format", "folded", trace)
	if code != 0 {
		t.Fatal(stderr)
	}
	golden(t, "folded.golden", stdout)
	var sum int64
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		i := strings.LastIndexByte(l, ' ')
		n, err := strconv.ParseInt(l[i+1:], 10, 64)
		if err != nil || !strings.Contains(l[:i], "main.") {
			t.Fatalf("bad line %q", l)
		}
		sum += n
	}
	// All the traced time: main.main, 6033µs, and goroutine 7, 28µs.
	if sum != 6_033_000+28_000 {
		t.Errorf("folded values add up to %d", sum)
	}
}

func TestExportChrome(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "chains.out")
	writeChainsTrace(t, trace, true)
	code, stdout, stderr := runCmd("export", "--format", "chrome", trace)
	if code != 0 {
		t.Fatal(stderr)
	}
	var doc struct {
		TraceEvents []struct {
			Ph   string         `json:"ph"`
			Name string         `json:"name"`
			Tid  uint64         `json:"tid"`
			Ts   *float64       `json:"ts"`
			Dur  *float64       `json:"dur"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	names, calls := map[uint64]bool{}, 0
	for _, e := range doc.TraceEvents {
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				names[e.Tid] = true
			}
		case "X":
			calls++
			if e.Ts == nil || e.Dur == nil || *e.Dur < 0 || !names[e.Tid] {
				t.Errorf("bad event %+v", e)
			}
		default:
			t.Errorf("unexpected phase %q", e.Ph)
		}
	}
	if calls != 10 {
		t.Errorf("%d calls, want 10", calls)
	}
}

// TestExportSpeedscope checks the rules of speedscope's evented format:
// frames exist, events per profile do not go back in time, and every
// close matches the innermost open frame.
func TestExportSpeedscope(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "chains.out")
	writeChainsTrace(t, trace, true)
	code, stdout, stderr := runCmd("export", "--format", "speedscope", trace)
	if code != 0 {
		t.Fatal(stderr)
	}
	var doc struct {
		Schema string `json:"$schema"`
		Shared struct {
			Frames []struct{ Name string } `json:"frames"`
		} `json:"shared"`
		Profiles []struct {
			Type       string `json:"type"`
			Unit       string `json:"unit"`
			StartValue int64  `json:"startValue"`
			EndValue   int64  `json:"endValue"`
			Events     []struct {
				Type  string `json:"type"`
				At    int64  `json:"at"`
				Frame int    `json:"frame"`
			} `json:"events"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "https://www.speedscope.app/file-format-schema.json" || len(doc.Profiles) != 2 {
		t.Fatalf("schema %q, %d profiles", doc.Schema, len(doc.Profiles))
	}
	for _, p := range doc.Profiles {
		if p.Type != "evented" || p.Unit != "nanoseconds" {
			t.Errorf("profile type %q unit %q", p.Type, p.Unit)
		}
		var open []int
		last := p.StartValue
		for _, e := range p.Events {
			if e.At < last || e.Frame < 0 || e.Frame >= len(doc.Shared.Frames) {
				t.Fatalf("bad event %+v", e)
			}
			last = e.At
			switch e.Type {
			case "O":
				open = append(open, e.Frame)
			case "C":
				if len(open) == 0 || open[len(open)-1] != e.Frame {
					t.Fatalf("close of frame %d does not match the open ones %v", e.Frame, open)
				}
				open = open[:len(open)-1]
			}
		}
		if len(open) != 0 || last > p.EndValue {
			t.Errorf("unclosed frames %v, or events after the end", open)
		}
	}
}

func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "chains.out")
	writeChainsTrace(t, trace, true)
	if code, _, stderr := runCmd("export", "--format", "svg", trace); code != 2 || !strings.Contains(stderr, "want pprof, folded, speedscope, chrome or otlp") {
		t.Errorf("bad format: exit %d, %q", code, stderr)
	}
	out := filepath.Join(dir, "x.json")
	if code, _, _ := runCmd("export", "--format", "chrome", "-o", out, filepath.Join(dir, "missing.out")); code != 1 {
		t.Errorf("missing trace: exit %d", code)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an output file was written for a failed export")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	_ = bytes.MinRead
}

// TestOutputChecked checks what -o may name, before any work: not the
// trace being read (through a link or not), nor another trace or Go
// source, nor a directory that is not there; and that an output link is
// written through.
func TestOutputChecked(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "chains.out")
	data := writeChainsTrace(t, trace, true)
	link := filepath.Join(dir, "link.out")
	if err := os.Symlink(trace, link); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"flame", "-o", trace, trace},
		{"flame", "-o", link, trace},
		{"flame", "-o", trace, "--diff", trace, link},
		{"export", "--format", "folded", "-o", trace, trace},
		{"export", "--format", "pprof", "-o", link, trace},
	} {
		code, _, stderr := runCmd(args...)
		if code != 2 || !strings.Contains(stderr, "that is the trace being read") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
		if got, _ := os.ReadFile(trace); !bytes.Equal(got, data) {
			t.Fatalf("%v overwrote the trace", args)
		}
	}
	// Nor another trace, nor Go source: a graph or an export replaces
	// neither, though it replaces the graph or profile before it.
	other := filepath.Join(dir, "other.out")
	os.WriteFile(other, data, 0o644)
	source := filepath.Join(dir, "main.go")
	src := []byte("package main\n\nfunc main() {}\n")
	os.WriteFile(source, src, 0o644)
	empty := filepath.Join(dir, "go.mod")
	os.WriteFile(empty, nil, 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"flame", "-o", other, trace}, "that is a calltrail trace"},
		{[]string{"export", "--format", "folded", "-o", other, trace}, "that is a calltrail trace"},
		{[]string{"flame", "-o", source, trace}, "that is the name of Go source"},
		{[]string{"export", "--format", "pprof", "-o", source, trace}, "that is the name of Go source"},
		{[]string{"record", "-o", source, "localhost:1"}, "that is the name of Go source"},
		// Named as Go source, empty or not there: refused all the same.
		{[]string{"export", "--format", "folded", "-o", empty, trace}, "that is the name of Go source"},
		{[]string{"flame", "-o", filepath.Join(dir, "new.go"), trace}, "that is the name of Go source"},
		{[]string{"run", "-o", filepath.Join(dir, "go.work"), "."}, "that is the name of Go source"},
	} {
		code, _, stderr := runCmd(c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q", c.args, code, stderr)
		}
	}
	if got, _ := os.ReadFile(other); !bytes.Equal(got, data) {
		t.Error("another trace was overwritten")
	}
	if got, _ := os.ReadFile(source); !bytes.Equal(got, src) {
		t.Error("Go source was overwritten")
	}
	if got, err := os.ReadFile(empty); err != nil || len(got) != 0 {
		t.Error("an empty go.mod was written")
	}
	if _, err := os.Stat(filepath.Join(dir, "new.go")); err == nil {
		t.Error("a new file named as Go source was written")
	}
	graph := filepath.Join(dir, "graph.svg")
	for range 2 {
		if code, _, stderr := runCmd("flame", "-o", graph, trace); code != 0 {
			t.Errorf("flame -o over the graph before: exit %d, %q", code, stderr)
		}
	}
	if code, _, stderr := runCmd("export", "--format", "folded", "-o", filepath.Join(dir, "no/such/dir/x"), trace); code != 1 || !strings.Contains(stderr, "no/such/dir") {
		t.Errorf("output in a missing directory: exit %d, %q", code, stderr)
	}
	// An output that is a link to another file is written through it.
	target := filepath.Join(dir, "target.folded")
	os.WriteFile(target, nil, 0o600)
	outLink := filepath.Join(dir, "out.folded")
	os.Symlink(target, outLink)
	if code, _, stderr := runCmd("export", "--format", "folded", "-o", outLink, trace); code != 0 {
		t.Fatalf("export through a link: exit %d, %q", code, stderr)
	}
	if info, err := os.Lstat(outLink); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the output link was replaced by a file")
	}
	if info, err := os.Stat(target); err != nil || info.Size() == 0 || info.Mode().Perm() != 0o600 {
		t.Errorf("the link's target was not written in place, keeping its mode: %v", info)
	}
}
