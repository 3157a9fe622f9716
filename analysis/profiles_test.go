package analysis

import (
	"bytes"
	"testing"

	"github.com/google/pprof/profile"
)

// pprofOf builds a gzipped profile whose samples have the given stacks
// (outermost first) and values in nanoseconds.
func pprofOf(t *testing.T, typ string, samples map[string]int64) []byte {
	t.Helper()
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "count", Unit: "count"}, {Type: typ, Unit: "nanoseconds"}}}
	fns := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := fns[name]; ok {
			return l
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name}
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
		p.Location = append(p.Location, l)
		fns[name] = l
		return l
	}
	for st, v := range samples {
		var locs []*profile.Location
		names := splitStack(st)
		for i := len(names) - 1; i >= 0; i-- {
			locs = append(locs, loc(names[i]))
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{1, v}})
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
	})
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
	var chain *Node
	p.Walk(func(n *Node) {
		if p.Names(n.Func) == "work" {
			chain = n
		}
	})
	if chain == nil || chain.CPU != 40*ms || chain.Wait != 40*ms {
		t.Errorf("chain main>work: %+v", chain)
	}
}

// TestThinCPU: 45ms of CPU samples are too few to split time on and off
// CPU; the profile is left out, and said to be thin.
func TestThinCPU(t *testing.T) {
	p := Analyze(build(t, splitTrace), Options{})
	p.splitProfiles(map[string][]byte{
		"cpu": pprofOf(t, "cpu", map[string]int64{"runtime.main;main;work": 45 * ms}),
	})
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
		if got := inSyscall(tt.stack); got != tt.want {
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
	}
	for _, tt := range tests {
		if got := callee(tt.names, tt.inlined, 1); got != tt.want {
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
