package analysis

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
	"github.com/google/pprof/profile"
)

// nowhere is the function table of a trace whose functions have no
// place: they are found in profiles by name only.
func nowhere(uint32) tracefile.Func { return tracefile.Func{} }

// pprofOf builds a gzipped profile whose samples have the given stacks
// (outermost first, separated by ;) and values in nanoseconds. A function
// written name@file:line starts at that place. A stack followed by #ID
// has its samples labelled with span ID (tracefile.SpanLabel).
func pprofOf(t *testing.T, typ string, samples map[string]int64) []byte {
	t.Helper()
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "count", Unit: "count"}, {Type: typ, Unit: "nanoseconds"}}}
	fns := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := fns[name]; ok {
			return l
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name}
		if at := strings.IndexByte(name, '@'); at >= 0 {
			colon := strings.LastIndexByte(name, ':')
			line, _ := strconv.Atoi(name[colon+1:])
			f.Name, f.Filename, f.StartLine = name[:at], name[at+1:colon], int64(line)
		}
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
		p.Location = append(p.Location, l)
		fns[name] = l
		return l
	}
	for st, v := range samples {
		st, span, _ := strings.Cut(st, "#")
		var locs []*profile.Location
		names := splitStack(st)
		for i := len(names) - 1; i >= 0; i-- {
			locs = append(locs, loc(names[i]))
		}
		s := &profile.Sample{Location: locs, Value: []int64{1, v}}
		if span != "" {
			s.Label = map[string][]string{tracefile.SpanLabel: {span}}
		}
		p.Sample = append(p.Sample, s)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func splitStack(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ';' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

// splitTrace is main(0..100ms) calling work(10..90ms).
const splitTrace = `
1 +main 0
1 +work 10000000
1 - 90000000
1 - 100000000
`

const ms = int64(1e6)

// TestSplit: main(0..100ms) calls work(10..90ms). CPU samples put 40ms in
// work and 15ms in main itself, 5ms of it where the scheduler preempted
// it; the block profile has work waiting 30ms on a mutex.
func TestSplit(t *testing.T) {
	p := Analyze(build(t, splitTrace), Options{})
	p.splitProfiles(map[string][]byte{
		"cpu": pprofOf(t, "cpu", map[string]int64{
			"runtime.main;main;work": 40 * ms,
			"runtime.main;main":      10 * ms,
			"runtime.main;main;runtime.asyncPreempt;runtime.asyncPreempt2;runtime.mcall": 5 * ms,
		}),
		"block": pprofOf(t, "delay", map[string]int64{
			"runtime.main;main;work;sync.(*Mutex).Lock;runtime.semacquire1": 30 * ms,
		}),
	}, nowhere, nil)
	if !p.HasCPU || !p.HasWaits || p.ThinCPU {
		t.Fatal("profiles not seen")
	}
	f := funcsByName(p)
	if f["work"].CPU != 40*ms || f["work"].Wait != 40*ms || f["main"].CPU != 55*ms || f["main"].Wait != 45*ms {
		t.Errorf("work cpu %d wait %d, main cpu %d wait %d", f["work"].CPU, f["work"].Wait, f["main"].CPU, f["main"].Wait)
	}
	if f["main"].SelfCPU != 15*ms || len(f["main"].Callees) != 0 {
		t.Errorf("main's own CPU %d, callees %+v; want 15ms, none: a preemption is no call", f["main"].SelfCPU, f["main"].Callees)
	}
	if len(f["work"].Waits) != 1 || f["work"].Waits[0] != (Wait{On: "sync.(*Mutex).Lock", Ns: 30 * ms}) {
		t.Errorf("work waits: %+v", f["work"].Waits)
	}
	// main waited too, through work, but not itself.
	if len(f["main"].Waits) != 1 || f["main"].Waits[0].Ns != 30*ms || len(f["main"].OwnWaits) != 0 || len(f["work"].OwnWaits) != 1 || f["work"].OwnWaits[0] != f["work"].Waits[0] {
		t.Errorf("main waits %+v, its own %+v; work's own %+v", f["main"].Waits, f["main"].OwnWaits, f["work"].OwnWaits)
	}
	var chain *Node
	p.Walk(func(n *Node) {
		if p.Name(n.Func) == "work" {
			chain = n
		}
	})
	if chain == nil || chain.CPU != 40*ms || chain.Wait != 40*ms {
		t.Errorf("chain main>work: %+v", chain)
	}
}

// TestSplitByChain: a sample stands for 10ms of CPU; one in work's 1ms
// chain under a puts that chain on CPU for its 1ms, not 10ms, and takes
// nothing off the 20ms that work waited under b; the rest goes to a's own
// 2ms, then to main's. A function's split is its chains' added up, as the
// flame graphs draw them, and no chain waits less than its callees.
func TestSplitByChain(t *testing.T) {
	p := Analyze(build(t, `
1 +main 0
1 +a 0
1 +work 1000000
1 - 2000000
1 - 3000000
1 +b 10000000
1 +work 10000000
1 - 30000000
1 - 30000000
1 - 100000000
`), Options{})
	p.splitProfiles(map[string][]byte{
		"cpu": pprofOf(t, "cpu", map[string]int64{
			"runtime.main;main":        60 * ms,
			"runtime.main;main;a;work": 10 * ms,
		}),
	}, nowhere, nil)
	if !p.HasCPU {
		t.Fatal("profile not seen")
	}
	f := funcsByName(p)
	if w := f["work"]; w.CPU != 1*ms || w.Wait != 20*ms || w.Tracing != 0 {
		t.Errorf("work (total %d): cpu %d, wait %d, tracing %d; want 1ms, 20ms, 0", w.Total, w.CPU, w.Wait, w.Tracing)
	}
	if a, m := f["a"], f["main"]; a.CPU != 3*ms || a.Wait != 0 || m.CPU != 70*ms || m.Wait != 30*ms {
		t.Errorf("a: cpu %d, wait %d; main: cpu %d, wait %d; want 3ms, 0, 70ms, 30ms", a.CPU, a.Wait, m.CPU, m.Wait)
	}
	sums := map[string][3]int64{}
	p.Walk(func(n *Node) {
		var below int64
		for _, c := range n.Children {
			below += c.Wait
		}
		if n.Wait < below {
			t.Errorf("%s waits %d, its callees %d", p.Name(n.Func), n.Wait, below)
		}
		if n.up < 0 {
			s := sums[p.Name(n.Func)]
			sums[p.Name(n.Func)] = [3]int64{s[0] + n.CPU, s[1] + n.Tracing, s[2] + n.Wait}
		}
	})
	for name, fn := range f {
		if got := [3]int64{fn.CPU, fn.Tracing, fn.Wait}; got != sums[name] {
			t.Errorf("%s: cpu, tracing, wait %v; its chains' %v", name, got, sums[name])
		}
	}
}

// TestSplitWithinTotal: a sample stands for 10ms of CPU, more than a
// 2ms call ran; the function's split is of its total all the same: on
// CPU, tracing and waiting add up to it, none above it.
func TestSplitWithinTotal(t *testing.T) {
	p := Analyze(build(t, `
1 +main 0
1 +short 10000000
1 - 12000000
1 +traced 20000000
1 - 23000000
1 - 100000000
`), Options{})
	p.splitProfiles(map[string][]byte{
		"cpu": pprofOf(t, "cpu", map[string]int64{
			"runtime.main;main":       60 * ms,
			"runtime.main;main;short": 10 * ms,
			"runtime.main;main;traced;github.com/calltrail/calltrail.(*tracer).enter": 10 * ms,
		}),
	}, nowhere, nil)
	if !p.HasCPU {
		t.Fatal("profile not seen")
	}
	f := funcsByName(p)
	for name, want := range map[string][3]int64{"short": {2 * ms, 0, 0}, "traced": {0, 3 * ms, 0}, "main": {70 * ms, 10 * ms, 20 * ms}} {
		got := [3]int64{f[name].CPU, f[name].Tracing, f[name].Wait}
		if got != want {
			t.Errorf("%s (total %d): cpu, tracing, wait %v, want %v", name, f[name].Total, got, want)
		}
	}
}

// TestFilteredProfiles: the profiles' samples say nothing of when, in
// which goroutine or in which call they were taken, so a filter by those
// leaves the profiles out; under a focus, only the samples with the
// focused function on their stack count.
func TestFilteredProfiles(t *testing.T) {
	for _, c := range []struct {
		f    filter.Filter
		o    Options
		want string
	}{
		{filter.Filter{}, Options{}, ""},
		{filter.Filter{Focus: regexp.MustCompile("a"), Hide: regexp.MustCompile("b"), MaxDepth: 2}, Options{}, ""},
		{filter.Filter{G: 7}, Options{}, "-g"},
		{filter.Filter{From: 1, MinTime: 1}, Options{OnlyPanics: true}, "-window -t --panics"},
		{filter.Filter{To: 1}, Options{OnlyErrors: true}, "-window --errors"},
	} {
		if got := bySample(&c.f, c.o); got != c.want {
			t.Errorf("%+v %+v: %q, want %q", c.f, c.o, got, c.want)
		}
	}
	focus := regexp.MustCompile("^work$")
	p := Analyze(build(t, `
1 +main 0
1 +work 10000000
1 - 50000000
1 +other 50000000
1 - 90000000
1 - 100000000
`), Options{Filter: &filter.Filter{Focus: focus}})
	p.focus = focus
	p.splitProfiles(map[string][]byte{
		"cpu": pprofOf(t, "cpu", map[string]int64{
			"runtime.main;main;work":  30 * ms,
			"runtime.main;main;other": 40 * ms,
			"runtime.main;main":       20 * ms,
		}),
	}, nowhere, nil)
	f := funcsByName(p)
	if !p.HasCPU || p.TotalCPU != 30*ms || f["work"] == nil || f["work"].CPU != 30*ms || f["main"] != nil {
		t.Errorf("focus on work: HasCPU %v, TotalCPU %d, funcs %v; want work's 30ms only", p.HasCPU, p.TotalCPU, f)
	}
}

// TestThinCPU: 45ms of CPU samples are too few to split time on and off
// CPU; the profile is left out, and said to be thin.
func TestThinCPU(t *testing.T) {
	p := Analyze(build(t, splitTrace), Options{})
	p.splitProfiles(map[string][]byte{
		"cpu": pprofOf(t, "cpu", map[string]int64{"runtime.main;main;work": 45 * ms}),
	}, nowhere, nil)
	f := funcsByName(p)
	if p.HasCPU || !p.ThinCPU || p.TotalCPU != 45*ms || f["work"].CPU != 0 || f["work"].Wait != 0 {
		t.Errorf("HasCPU %v, ThinCPU %v, TotalCPU %d, work cpu %d wait %d; want the profile left out", p.HasCPU, p.ThinCPU, p.TotalCPU, f["work"].CPU, f["work"].Wait)
	}
}

func funcsByName(p *Profile) map[string]*Func {
	m := map[string]*Func{}
	for _, f := range p.Funcs {
		m[f.Name] = f
	}
	return m
}

func TestInSyscall(t *testing.T) {
	tests := []struct {
		stack []string // outermost first, from the untraced callee in
		want  bool
	}{
		{[]string{"os.(*File).Sync", "internal/poll.(*FD).Fsync", "syscall.Fsync", "syscall.Syscall"}, true},
		{[]string{"os.(*File).Read", "internal/poll.(*FD).Read", "syscall.Read", "internal/runtime/syscall.Syscall6"}, true},
		{[]string{"os.Create", "runtime.entersyscall"}, true},
		// A connection waits in the poller, for a peer.
		{[]string{"io.ReadFull", "net.(*conn).Read", "internal/poll.(*FD).Read", "syscall.Read"}, false},
		{[]string{"fmt.Errorf", "runtime.mallocgc"}, false},
	}
	for _, tt := range tests {
		if got := inSyscall(functions(tt.stack)); got != tt.want {
			t.Errorf("inSyscall(%q) = %v, want %v", tt.stack, got, tt.want)
		}
	}
}

// TestCallee checks which frame below a traced function counts as its
// callee: not its own package's code inlined into its frame, which is its
// own, but the next physical frame, or another package's inlined code.
func TestCallee(t *testing.T) {
	tests := []struct {
		names   []string
		inlined []bool
		want    int
	}{
		// main.readbyte inlined into main.count, which calls Read.
		{[]string{"main.main", "main.count", "main.readbyte", "os.(*File).Read", "syscall.read"}, []bool{false, false, true, false, true}, 3},
		// A sample in the inlined helper's own code.
		{[]string{"main.main", "main.count", "main.readbyte"}, []bool{false, false, true}, -1},
		// Another package's code inlined: it is the callee.
		{[]string{"main.main", "main.count", "strings.Index"}, []bool{false, false, true}, 2},
		// A helper that is not inlined, only untraced.
		{[]string{"main.main", "main.count", "main.readbyte", "os.(*File).Read"}, []bool{false, false, false, false}, 2},
		// A sample in the compiler's wrapper of a promoted method: the
		// call's, not a callee's.
		{[]string{"main.main", "main.count", "ast.(*Text).FirstChild <autogenerated>"}, []bool{false, false, false}, -1},
		// Below a wrapper, the method it wraps.
		{[]string{"main.main", "main.count", "ast.(*Text).Dump <autogenerated>", "ast.DumpHelper"}, []bool{false, false, false, false}, 3},
	}
	for _, tt := range tests {
		if got := callee(functions(tt.names), tt.inlined, 1); got != tt.want {
			t.Errorf("callee(%v, %v) = %d, want %d", tt.names, tt.inlined, got, tt.want)
		}
	}
	for name, want := range map[string]string{
		"main.(*T).M":                 "main",
		"example.com/a/b.F.func1":     "example.com/a/b",
		"example.com/a/b.(*T[...]).M": "example.com/a/b",
	} {
		if got := funcPackage(name); got != want {
			t.Errorf("funcPackage(%q) = %q, want %q", name, got, want)
		}
	}
}

// functions makes the functions of a sample's stack, a name ending in
// " <autogenerated>" of a wrapper the compiler made.
func functions(names []string) []*profile.Function {
	var fns []*profile.Function
	for _, name := range names {
		fn := &profile.Function{Name: name}
		if n, ok := strings.CutSuffix(name, " <autogenerated>"); ok {
			fn.Name, fn.Filename = n, "<autogenerated>"
		}
		fns = append(fns, fn)
	}
	return fns
}

// TestTracingIsNotWaiting: CPU samples in calltrail's runtime under a
// traced call are that call's tracing time, neither its CPU time nor its
// waiting; a sample of the writer, under no traced call, is the trace's
// alone.
func TestTracingIsNotWaiting(t *testing.T) {
	p := Analyze(build(t, splitTrace), Options{})
	p.splitProfiles(map[string][]byte{
		"cpu": pprofOf(t, "cpu", map[string]int64{
			"runtime.main;main;work":                                      20 * ms,
			"runtime.main;main;work;github.com/calltrail/calltrail.Exit":  50 * ms,
			"runtime.main;main;github.com/calltrail/calltrail.Enter":      5 * ms,
			"runtime.goexit;github.com/calltrail/calltrail.(*writer).run": 7 * ms,
		}),
	}, nowhere, nil)
	f := funcsByName(p)
	if got, want := [3]int64{f["work"].CPU, f["work"].Tracing, f["work"].Wait}, [3]int64{20 * ms, 50 * ms, 10 * ms}; got != want {
		t.Errorf("work: cpu, tracing, wait %v, want %v", got, want)
	}
	if got, want := [3]int64{f["main"].CPU, f["main"].Tracing, f["main"].Wait}, [3]int64{20 * ms, 55 * ms, 25 * ms}; got != want {
		t.Errorf("main: cpu, tracing, wait %v, want %v", got, want)
	}
	if p.TotalCPU != 20*ms || p.TracingCPU != 62*ms {
		t.Errorf("program's CPU %d, tracing %d; want 20ms and 62ms", p.TotalCPU, p.TracingCPU)
	}
	p.Walk(func(n *Node) {
		if p.Name(n.Func) == "work" && (n.CPU != 20*ms || n.Tracing != 50*ms || n.Wait != 10*ms) {
			t.Errorf("chain main>work: cpu %d tracing %d wait %d", n.CPU, n.Tracing, n.Wait)
		}
	})
}

// TestResolve: functions the compiler names otherwise than the source
// (instances of generic functions, closures of inlined functions) are
// found in the profile by name with their type arguments left out, or by
// where they start; a place two traced functions share is told apart by
// which of them is a closure, and another package's function at the same
// file and line is not taken for them.
func TestResolve(t *testing.T) {
	p := Analyze(build(t, `
1 +main.main 0
1 +main.sumSq[...] 0
1 - 30000000
1 +main.observe.func1 30000000
1 - 60000000
1 +main.f 60000000
1 +main.f.func1 60000000
1 - 90000000
1 - 100000000
1 - 101000000
`), Options{})
	places := map[string]tracefile.Func{
		"main.main":          {File: "main.go", Line: 40},
		"main.sumSq[...]":    {File: "main.go", Line: 10},
		"main.observe.func1": {File: "main.go", Line: 23},
		"main.f":             {File: "f.go", Line: 5},
		"main.f.func1":       {File: "f.go", Line: 5},
	}
	info := func(id uint32) tracefile.Func { return places[p.Name(id)] }
	p.splitProfiles(map[string][]byte{
		"cpu": pprofOf(t, "cpu", map[string]int64{
			"main.main;main.sumSq[go.shape.float64]@/src/x/main.go:10":                   30 * ms,
			"main.main;main.handle.observe.func1@/src/x/main.go:23":                      20 * ms,
			"main.main;main.f;main.g.f.func3@/src/x/f.go:5":                              25 * ms,
			"main.main;main.f;other.f.func1@/src/other/f.go:5":                           5 * ms,
			"main.main;main.(*List[go.shape.struct { a [2]int }]).Push@/src/x/list.go:7": 1 * ms,
		}),
	}, info, nil)
	f := funcsByName(p)
	for name, want := range map[string]int64{
		"main.sumSq[...]": 30 * ms, "main.observe.func1": 20 * ms, "main.f.func1": 25 * ms, "main.f": 30 * ms, "main.main": 81 * ms,
	} {
		if f[name].CPU != want {
			t.Errorf("%s: cpu %v, want %v", name, f[name].CPU, want)
		}
	}
	if f["main.f"].SelfCPU != 5*ms || len(f["main.f"].Callees) != 1 || f["main.f"].Callees[0].On != "other.f.func1" {
		t.Errorf("main.f: own CPU %d, callees %+v; want 5ms in other.f.func1", f["main.f"].SelfCPU, f["main.f"].Callees)
	}
}

// TestResolveTestedCommand: in a test binary of a command, the runtime
// names the command's functions by its import path, calltrail main.*;
// the library's own functions keep their names, and a function of the
// command that no traced one is stays unresolved.
func TestResolveTestedCommand(t *testing.T) {
	p := Analyze(build(t, `
1 +main.TestRun.func1 0
1 +main.run 0
1 +example.com/lib.Parse 10000000
1 - 30000000
1 - 90000000
1 - 100000000
`), Options{})
	p.Meta.Package = "example.com/cmd/tool" // as a test binary of a command records it
	p.splitProfiles(map[string][]byte{
		"cpu": pprofOf(t, "cpu", map[string]int64{
			"testing.tRunner;example.com/cmd/tool.TestRun.func1;example.com/cmd/tool.run":                           40 * ms,
			"testing.tRunner;example.com/cmd/tool.TestRun.func1;example.com/cmd/tool.run;example.com/lib.Parse":     20 * ms,
			"testing.tRunner;example.com/cmd/tool.TestRun.func1;example.com/cmd/tool.run;example.com/cmd/tool.help": 5 * ms,
		}),
	}, nowhere, nil)
	f := funcsByName(p)
	for name, want := range map[string]int64{"main.TestRun.func1": 65 * ms, "main.run": 65 * ms, "example.com/lib.Parse": 20 * ms} {
		if f[name].CPU != want {
			t.Errorf("%s: cpu %v, want %v", name, f[name].CPU, want)
		}
	}
	if c := f["main.run"].Callees; len(c) != 1 || c[0].On != "example.com/cmd/tool.help" {
		t.Errorf("main.run's untraced callees %+v, want example.com/cmd/tool.help", c)
	}
}

func TestGenericName(t *testing.T) {
	for in, want := range map[string]string{
		"main.sumSq[go.shape.float64]":                    "main.sumSq[...]",
		"main.(*List[go.shape.struct { a [2]int }]).Push": "main.(*List[...]).Push",
		"main.Map[go.shape.int,go.shape.[]string].func1":  "main.Map[...].func1",
		"main.plain":      "main.plain",
		"main.sumSq[...]": "main.sumSq[...]",
	} {
		if got := GenericName(in); got != want {
			t.Errorf("GenericName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestProfileBomb: a profile that inflates past maxInflated is left out,
// said, whatever its ratio: a trace's chunk may hold 64 MiB of gzip.
func TestProfileBomb(t *testing.T) {
	defer func(m int64) { maxInflated = m }(maxInflated)
	maxInflated = 64 << 10
	var raw bytes.Buffer
	for i := range 200 << 10 / 8 { // barely compressible: the ratio allows it
		fmt.Fprintf(&raw, "%08x", uint32(i)*2654435761)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw.Bytes())
	zw.Close()
	p := Analyze(build(t, splitTrace), Options{})
	p.splitProfiles(map[string][]byte{"cpu": gz.Bytes()}, nowhere, nil)
	if p.HasCPU || len(p.ProfileErrors) != 1 || !strings.Contains(p.ProfileErrors[0].Error(), "inflates to more than 65536 bytes") {
		t.Errorf("a profile past the budget: HasCPU %v, errors %v", p.HasCPU, p.ProfileErrors)
	}
}

// TestRequestProfiles: the analysis of a request's calls (a reader
// narrowed by KeepSpans) splits their time by the CPU profile's samples
// labelled with the request's spans alone, leaves out a CPU profile whose
// samples name no span, and the block and mutex profiles, whose samples
// never do, and says so; the whole program's analysis takes every sample.
func TestRequestProfiles(t *testing.T) {
	data, err := tracetest.Build(`
1 +main 0
1 span 1 0 GET 1000
1 +work 10000000
1 - 90000000
1 end 1 95000000
1 span 2 0 GET 96000000
1 +work2 97000000
1 - 190000000
1 end 2 195000000
1 - 200000000
`)
	if err != nil {
		t.Fatal(err)
	}
	one, two := tracetest.SpanID(1), tracetest.SpanID(2)
	withProfiles := func(profiles map[string][]byte) []byte {
		var extra bytes.Buffer
		e, err := tracewrite.NewEncoder(&extra, nil)
		if err != nil {
			t.Fatal(err)
		}
		extra.Reset() // the chunks alone, not a second header
		for kind, p := range profiles {
			e.Profile(kind, p)
		}
		if err := e.Flush(); err != nil {
			t.Fatal(err)
		}
		return append(append([]byte(nil), data...), extra.Bytes()...)
	}
	analyse := func(trace []byte, keep tracefile.SpanID) *Profile {
		r, _ := tracefile.NewReader(bytes.NewReader(trace))
		if keep.IsValid() {
			r.KeepSpans(func(id tracefile.SpanID) bool { return id == keep })
		}
		return Analyze(r, Options{})
	}
	labelled := withProfiles(map[string][]byte{
		"cpu": pprofOf(t, "cpu", map[string]int64{
			"runtime.main;main;work#" + one.String():  60 * ms,
			"runtime.main;main;work2#" + two.String(): 80 * ms,
			"runtime.main;main":                       20 * ms,
		}),
		"block": pprofOf(t, "delay", map[string]int64{"runtime.main;main;work2;sync.(*Mutex).Lock": 5 * ms}),
	})
	if p := analyse(labelled, tracefile.SpanID{}); !p.HasCPU || !p.HasWaits || p.ProfilesLeftOut || p.TotalCPU != 160*ms {
		t.Errorf("the whole program: HasCPU %v, HasWaits %v, ProfilesLeftOut %v, %d ns on CPU", p.HasCPU, p.HasWaits, p.ProfilesLeftOut, p.TotalCPU)
	}
	p := analyse(labelled, one)
	f := funcsByName(p)
	if !p.HasCPU || p.HasWaits || !p.ProfilesLeftOut || p.TotalCPU != 60*ms || f["work"] == nil || f["work"].CPU != 60*ms || f["work2"] != nil {
		t.Errorf("request 1: HasCPU %v, HasWaits %v, ProfilesLeftOut %v, %d ns on CPU, functions %v", p.HasCPU, p.HasWaits, p.ProfilesLeftOut, p.TotalCPU, f)
	}
	if len(p.LeftOut) != 1 || !strings.Contains(p.LeftOut[0], "block profile is the whole program's") || len(p.ProfileErrors) != 0 {
		t.Errorf("request 1: left out %v, errors %v", p.LeftOut, p.ProfileErrors)
	}
	if p := analyse(labelled, two); !p.HasCPU || p.TotalCPU != 80*ms || funcsByName(p)["work2"].CPU != 80*ms {
		t.Errorf("request 2: HasCPU %v, %d ns on CPU", p.HasCPU, p.TotalCPU)
	}
	unlabelled := withProfiles(map[string][]byte{"cpu": pprofOf(t, "cpu", map[string]int64{"runtime.main;main;work": 60 * ms})})
	if p := analyse(unlabelled, one); p.HasCPU || !p.ProfilesLeftOut || len(p.LeftOut) != 1 || funcsByName(p)["work"].CPU != 0 {
		t.Errorf("an unlabelled profile, request 1: HasCPU %v, ProfilesLeftOut %v, left out %v", p.HasCPU, p.ProfilesLeftOut, p.LeftOut)
	}
}
