package diagnose

import (
	"reflect"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/tracefile"
)

func profile(funcs ...*analysis.Func) *analysis.Profile {
	p := &analysis.Profile{Root: &analysis.Node{}, Funcs: map[uint32]*analysis.Func{}, HasCPU: true, HasWaits: true}
	for i, f := range funcs {
		f.ID = uint32(i + 1)
		if f.OwnWaits == nil {
			// Unless a test says otherwise, a function waited
			// itself.
			f.OwnWaits = f.Waits
		}
		p.Funcs[f.ID] = f
		p.FuncTable = append(p.FuncTable, tracefile.Func{Name: f.Name})
	}
	return p
}

func TestFindings(t *testing.T) {
	tests := []struct {
		name  string
		p     *analysis.Profile
		kinds string // kinds of the findings, in order
		first string // words the first message must hold
	}{
		{
			name: "a lock",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.handle", Calls: 1000, Total: 10e9, Sum: 10e9, Self: 8e9, Waits: []analysis.Wait{{On: "sync.(*Mutex).Lock", Ns: 8e9}}, CPU: 2e9, SelfCPU: 1e8},
					&analysis.Func{Name: "main.getInfo", Calls: 1000, Total: 2e9, Sum: 2e9, Self: 2e9, Held: 8e9, CPU: 2e9, SelfCPU: 19e8},
					&analysis.Func{Name: "main.main", Calls: 1, Total: 10e9, Sum: 10e9, Waits: []analysis.Wait{{On: "sync.(*WaitGroup).Wait", Ns: 10e9}}},
				)
				p.Work, p.TotalCPU = []int64{10e9}, 2e9
				return p
			}(),
			kinds: "wait self",
			first: "main.handle spends 80% of its time waiting on sync.(*Mutex).Lock (8s in 1000 calls), for a lock held in main.getInfo",
		},
		{
			// One lock waited on in two callees, through their
			// caller: a line for each place it was waited, none for
			// the caller, which waited through them.
			name: "a lock waited in two callees",
			p: func() *analysis.Profile {
				lock := "sync.(*Mutex).Lock"
				p := profile(
					&analysis.Func{Name: "main.handle", Calls: 1000, Total: 10e9, Sum: 10e9, Self: 1e9, Waits: []analysis.Wait{{On: lock, Ns: 8e9}}, OwnWaits: []analysis.Wait{}, CPU: 2e9, SelfCPU: 1e8},
					&analysis.Func{Name: "main.getOrder", Calls: 1000, Total: 6e9, Sum: 6e9, Self: 6e9, Waits: []analysis.Wait{{On: lock, Ns: 5e9}}, CPU: 1e9, SelfCPU: 1e9},
					&analysis.Func{Name: "main.getUser", Calls: 1000, Total: 3e9, Sum: 3e9, Self: 3e9, Waits: []analysis.Wait{{On: lock, Ns: 3e9}}, CPU: 0, SelfCPU: 0},
				)
				p.Work, p.TotalCPU = []int64{10e9}, 2e9
				return p
			}(),
			kinds: "wait wait self",
			first: "main.getOrder spends 83% of its time waiting on sync.(*Mutex).Lock (5s in 1000 calls)",
		},
		{
			// One call: "1 call", not "1 calls".
			name: "a channel, in one call",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.consume", Calls: 1, Total: 10e9, Sum: 10e9, Self: 9e9, Waits: []analysis.Wait{{On: "channel receive", Ns: 9e9}}, CPU: 1e8, SelfCPU: 1e8},
					&analysis.Func{Name: "main.main", Calls: 1, Total: 10e9, Sum: 10e9},
				)
				p.Work, p.TotalCPU = []int64{10e9}, 1e8
				return p
			}(),
			kinds: "wait self",
			first: "main.consume spends 90% of its time waiting on a channel receive (9s in 1 call): look at what feeds or drains the channel",
		},
		{
			name: "an error per call",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.clone", Calls: 1e6, Total: 4e9, Sum: 4e9, Self: 4e9, CPU: 4e9, SelfCPU: 4e9, Callees: []analysis.Wait{{On: "fmt.Errorf", Ns: 3e9}}},
					&analysis.Func{Name: "main.main", Calls: 1, Total: 5e9, Sum: 5e9, Self: 1e9, CPU: 5e9, SelfCPU: 1e9},
				)
				p.Work, p.TotalCPU = []int64{5e9}, 5e9
				return p
			}(),
			kinds: "callee self",
			first: "main.clone spends 60% of all CPU time in fmt.Errorf (3s of CPU over 1000000 calls of main.clone, 3µs a call): an error is built on every call",
		},
		{
			name: "a file synced per call",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.saveState", Calls: 400, Total: 4e8, Sum: 4e8, Self: 4e8, CPU: 1e8, SelfCPU: 1e8,
						Callees:  []analysis.Wait{{On: "os.(*File).Sync", Ns: 6e7}, {On: "os.Create", Ns: 3e7}, {On: "fmt.Fprintf", Ns: 1e7}},
						Syscalls: []analysis.Wait{{On: "os.(*File).Sync", Ns: 6e7}, {On: "os.Create", Ns: 3e7}}},
					&analysis.Func{Name: "main.main", Calls: 1, Total: 2e9, Sum: 2e9, Self: 1.6e9, CPU: 2e8, SelfCPU: 1e8},
				)
				p.Work, p.TotalCPU = []int64{2e9}, 2e8
				return p
			}(),
			kinds: "syscall self",
			// 90ms in system calls on CPU, and 300ms off CPU.
			first: "main.saveState spends 20% of the program's time in system calls (390ms: 90ms on CPU, 300ms off CPU that no block sample explains (the kernel's, or a sleep); 400 calls of main.saveState, 1ms each), in os.(*File).Sync 67%, os.Create 33%: a file synced to disk on every call",
		},
		{
			// Off CPU, but its own CPU is not in system calls: the
			// scheduler's delay, not the kernel's.
			name: "off CPU without system calls",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.work", Calls: 400, Total: 4e9, Sum: 4e9, Self: 4e9, CPU: 1e9, SelfCPU: 1e9,
						Callees:  []analysis.Wait{{On: "os.Getpid", Ns: 1e8}},
						Syscalls: []analysis.Wait{{On: "os.Getpid", Ns: 1e8}}},
					&analysis.Func{Name: "main.main", Calls: 1, Total: 4e9, Sum: 4e9, CPU: 1e9},
				)
				p.Work, p.TotalCPU = []int64{4e9}, 1e9
				return p
			}(),
			kinds: "self",
		},
		{
			// No CPU profile: a server's accept loop, blocked all its
			// life in an untraced callee, is not said to be busy in its
			// own code; the handler is named, with what the wall time
			// cannot tell.
			name: "a server without a CPU profile",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.listenAndServe", Calls: 1, Total: 10e9, Sum: 10e9, Self: 10e9},
					&analysis.Func{Name: "main.handle", Calls: 1000, Total: 3e9, Sum: 3e9, Self: 2e9},
				)
				p.HasCPU, p.HasWaits = false, false
				p.Work, p.Duration = []int64{10e9, 3e9}, 10e9
				return p
			}(),
			kinds: "self",
			first: "main.handle takes 15% of the goroutines' traced time outside traced functions (1000 calls, 3ms each, 2s in all): its own code or untraced callees, running or blocked (no CPU profile to tell)",
		},
		{
			// Only the long call: named, ranked low, with the doubt.
			name: "a goroutine blocked all its life, without a CPU profile",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.main", Calls: 1, Total: 10e9, Sum: 10e9, Self: 10e9},
					&analysis.Func{Name: "main.handle", Calls: 1000, Total: 1e8, Sum: 1e8, Self: 1e8},
				)
				p.HasCPU, p.HasWaits = false, false
				p.Work, p.Duration = []int64{10e9, 1e8}, 10e9
				return p
			}(),
			kinds: "self",
			first: "main.main takes 99% of the goroutines' traced time outside traced functions (1 call, 10s each, 10s in all): its own code or untraced callees, running or blocked (no CPU profile to tell); a call that long is more often blocked",
		},
		{
			// Nothing takes a tenth of the program, and no call is long.
			name: "no share worth a line, without a CPU profile",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.a", Calls: 10, Total: 1e6, Sum: 1e6, Self: 1e6},
					&analysis.Func{Name: "main.b", Calls: 10, Total: 1e6, Sum: 1e6, Self: 1e6},
				)
				p.HasCPU, p.HasWaits = false, false
				p.Work = []int64{10e9}
				return p
			}(),
			kinds: "",
		},
		{
			name: "goroutine churn",
			p: func() *analysis.Profile {
				p := profile(&analysis.Func{Name: "main.pixel", Calls: 5000, Total: 1e8, Sum: 1e8})
				p.HasCPU, p.HasWaits = false, false
				for i := 0; i < 5000; i++ {
					p.Lifetimes = append(p.Lifetimes, 30_000)
					p.Work = append(p.Work, 20_000)
				}
				return p
			}(),
			kinds: "churn",
			first: "5000 goroutines ran traced code, each for 20µs of work at the median",
		},
		{
			// A server's connections, each a goroutine: the advice is
			// the clients'.
			name: "a connection per request",
			p: func() *analysis.Profile {
				p := profile(&analysis.Func{Name: "main.hello", Calls: 5000, Total: 1e8, Sum: 1e8}, &analysis.Func{Name: "net/http.(*Server).Serve"})
				p.HasCPU, p.HasWaits = false, false
				for i := 0; i < 5000; i++ {
					p.Lifetimes = append(p.Lifetimes, 30_000)
					p.Work = append(p.Work, 20_000)
				}
				p.Creators = map[uint32]uint64{2: 4999, 1: 1}
				return p
			}(),
			kinds: "churn",
			first: "5000 goroutines ran traced code, each for 20µs of work at the median; net/http.(*Server).Serve started 4999 of them, one per connection: the clients opened a connection for few requests each",
		},
		{
			// main waits for a signal all its life; the work's cost,
			// smaller, is what to look at first.
			name: "a goroutine parked on purpose",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.main", Calls: 1, Total: 10e9, Sum: 10e9, Waits: []analysis.Wait{{On: "channel receive", Ns: 98e8}}},
					&analysis.Func{Name: "main.serve", Calls: 1e5, Total: 2e9, Sum: 2e9, Self: 2e9, CPU: 2e9, SelfCPU: 2e9, Callees: []analysis.Wait{{On: "fmt.Errorf", Ns: 1e9}}},
				)
				p.Work, p.TotalCPU = []int64{10e9, 2e9}, 2e9
				return p
			}(),
			kinds: "callee self wait",
			first: "main.serve spends 50% of all CPU time in fmt.Errorf",
		},
		{
			// A CPU-bound program of 47ms: its CPU profile, too thin,
			// was left out, and its wall time is not blamed either.
			name: "a CPU profile too thin",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.main", Calls: 1, Total: 47e6, Sum: 47e6, Self: 47e6},
					&analysis.Func{Name: "main.work", Calls: 10, Total: 46e6, Sum: 46e6, Self: 46e6, Waits: []analysis.Wait{{On: "sync.(*Mutex).Lock", Ns: 1e6}}},
				)
				p.HasCPU, p.ThinCPU = false, true
				p.Work, p.TotalCPU = []int64{47e6}, 40e6
				return p
			}(),
			kinds: "",
		},
		{
			name: "calls dropped",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.clone", Calls: 1e6, Total: 4e9, Sum: 4e9, Self: 4e9, CPU: 4e9, SelfCPU: 4e9, Callees: []analysis.Wait{{On: "fmt.Errorf", Ns: 3e9}}},
					&analysis.Func{Name: "main.main", Calls: 1, Total: 5e9, Sum: 5e9, Self: 1e9, CPU: 5e9, SelfCPU: 1e9},
				)
				p.Work, p.TotalCPU = []int64{5e9}, 5e9
				p.Stats.DroppedCalls = 3e6 - 1
				return p
			}(),
			kinds: "lost callee self",
			first: "2999999 of the program's 4000000 calls (75%) were dropped while recording",
		},
		{
			// A short run: two samples in a function that ran for 5ms
			// claim 20ms of CPU, one in a callee of a function that ran
			// for 3ms 10ms. The trace's own times bound them, and the
			// function named is the one that ran.
			name: "samples beyond the trace's times",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.parseKey", Calls: 88001, Total: 32e6, Sum: 32e6, Self: 5e6, CPU: 20e6, SelfCPU: 20e6},
					&analysis.Func{Name: "main.encode", Calls: 80000, Total: 27e6, Sum: 27e6, Self: 3e6, CPU: 10e6, SelfCPU: 10e6, Callees: []analysis.Wait{{On: "strconv.AppendInt", Ns: 10e6}}},
					&analysis.Func{Name: "main.main", Calls: 1, Total: 100e6, Sum: 100e6, Self: 70e6, CPU: 90e6, SelfCPU: 15e6},
				)
				p.Work, p.TotalCPU = []int64{100e6}, 90e6
				return p
			}(),
			kinds: "self",
			first: "main.main takes 17% of all CPU time in its own code (15ms of CPU over 1 call, 15ms a call)",
		},
		{
			// A server: main parked on its listener for the run, a
			// handler whose callee sleeps. With CPUs to spare, the
			// sleep is the callee's, and main's parked time is no
			// share of the program's work.
			name: "off CPU, a server",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.main", Calls: 1, Total: 10e9, Sum: 10e9, Self: 10e9, Wait: 10e9},
					&analysis.Func{Name: "main.handle", Calls: 1000, Total: 12e8, Sum: 12e8, Self: 2e8, CPU: 1e8, SelfCPU: 1e8, Wait: 11e8},
					&analysis.Func{Name: "main.sleepy", Calls: 1000, Total: 1e9, Sum: 1e9, Self: 1e9, Wait: 1e9},
				)
				main := &analysis.Node{Func: 1, Parent: p.Root, Calls: 1, Total: 10e9, Self: 10e9, Wait: 10e9}
				handle := &analysis.Node{Func: 2, Parent: p.Root, Calls: 1000, Total: 12e8, Self: 2e8, CPU: 1e8, Wait: 11e8}
				sleepy := &analysis.Node{Func: 3, Parent: handle, Calls: 1000, Total: 1e9, Self: 1e9, Wait: 1e9}
				handle.Children = []*analysis.Node{sleepy}
				p.Root.Children = []*analysis.Node{main, handle}
				p.Work, p.TotalCPU, p.Duration, p.Meta.GOMAXPROCS = []int64{10e9, 12e8}, 2e8, 10e9, 2
				return p
			}(),
			kinds: "offcpu self",
			first: "main.sleepy spends 100% of its own time off CPU, on nothing the block profile names (1s over 1000 calls, 1ms a call), where the program's other functions spent 50% of theirs, and it used 1% of its 2 CPUs",
		},
		{
			// The same server with its CPUs busy: its handler's time off
			// CPU is more likely a wait for the program's own work (an
			// RPC's client for its server) than a sleep.
			name: "off CPU, the program busy",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.handle", Calls: 1000, Total: 12e8, Sum: 12e8, Self: 2e8, CPU: 1e8, SelfCPU: 1e8, Wait: 11e8},
					&analysis.Func{Name: "main.sleepy", Calls: 1000, Total: 1e9, Sum: 1e9, Self: 1e9, Wait: 1e9},
				)
				handle := &analysis.Node{Func: 1, Parent: p.Root, Calls: 1000, Total: 12e8, Self: 2e8, CPU: 1e8, Wait: 11e8}
				handle.Children = []*analysis.Node{{Func: 2, Parent: handle, Calls: 1000, Total: 1e9, Self: 1e9, Wait: 1e9}}
				p.Root.Children = []*analysis.Node{handle}
				p.Work, p.TotalCPU, p.Duration, p.Meta.GOMAXPROCS = []int64{12e8}, 15e8, 12e8, 2
				return p
			}(),
			kinds: "",
		},
		{
			// An RPC's client loops, four calls of most of the run,
			// waiting on the network for the program's own server:
			// loops waiting for work, not slow calls.
			name: "off CPU, a client's loops",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.client", Calls: 4, Total: 8e9, Sum: 8e9, Self: 8e9, CPU: 1e8, SelfCPU: 1e8, Wait: 79e8},
					&analysis.Func{Name: "main.handle", Calls: 1e5, Total: 4e9, Sum: 4e9, Self: 4e9, CPU: 8e8, SelfCPU: 8e8, Wait: 32e8},
				)
				p.Root.Children = []*analysis.Node{
					{Func: 1, Parent: p.Root, Calls: 4, Total: 8e9, Self: 8e9, CPU: 1e8, Wait: 79e8},
					{Func: 2, Parent: p.Root, Calls: 1e5, Total: 4e9, Self: 4e9, CPU: 8e8, Wait: 32e8},
				}
				p.Work, p.TotalCPU, p.Duration, p.Meta.GOMAXPROCS = []int64{8e9, 4e9}, 9e8, 2e9, 2
				return p
			}(),
			kinds: "self",
		},
		{
			// A goroutine per pixel: 65,536 of them, each waiting for
			// a core in turns, off CPU in its outermost call.
			name: "off CPU, a goroutine per item",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.render.func1", Calls: 65536, Total: 100e9, Sum: 100e9, Self: 100e9, Wait: 100e9},
					&analysis.Func{Name: "main.render", Calls: 1, Total: 1e9, Sum: 1e9, Self: 1e9, CPU: 4e8, SelfCPU: 4e8, Wait: 6e8},
				)
				p.Root.Children = []*analysis.Node{
					{Func: 1, Parent: p.Root, Calls: 65536, Total: 100e9, Self: 100e9, Wait: 100e9},
					{Func: 2, Parent: p.Root, Calls: 1, Total: 1e9, Self: 1e9, CPU: 4e8, Wait: 6e8},
				}
				p.Work, p.TotalCPU, p.Duration, p.Meta.GOMAXPROCS = []int64{100e9, 1e9}, 4e8, 1e9, 2
				return p
			}(),
			kinds: "self",
		},
		{
			// A CPU-bound program on a machine busy with others: each
			// function two thirds off CPU, waiting for a core, alike.
			// Nothing is said of it.
			name: "off CPU alike, the machine busy",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.encode", Calls: 1e5, Total: 3e9, Sum: 3e9, Self: 1e9, CPU: 1e9, SelfCPU: 33e7, Wait: 2e9},
					&analysis.Func{Name: "main.clone", Calls: 9e5, Total: 2e9, Sum: 2e9, Self: 2e9, CPU: 67e7, SelfCPU: 67e7, Wait: 133e7},
				)
				encode := &analysis.Node{Func: 1, Parent: p.Root, Calls: 1e5, Total: 3e9, Self: 1e9, CPU: 1e9, Wait: 2e9}
				encode.Children = []*analysis.Node{{Func: 2, Parent: encode, Calls: 9e5, Total: 2e9, Self: 2e9, CPU: 67e7, Wait: 133e7}}
				p.Root.Children = []*analysis.Node{encode}
				p.Work, p.TotalCPU, p.Duration, p.Meta.GOMAXPROCS = []int64{3e9}, 1e9, 3e9, 2
				return p
			}(),
			kinds: "self",
		},
		{
			// A goroutine per transaction that only waits for its end
			// (database/sql's awaitDone): parked on purpose, though in
			// 50 calls; the work ranks first.
			name: "watchers parked",
			p: func() *analysis.Profile {
				p := profile(
					&analysis.Func{Name: "main.watch", Calls: 50, Total: 5e9, Sum: 5e9, Self: 5e9, Waits: []analysis.Wait{{On: "channel receive", Ns: 4.8e9}}},
					&analysis.Func{Name: "main.query", Calls: 1000, Total: 2e9, Sum: 2e9, Self: 2e9, CPU: 2e9, SelfCPU: 2e9},
				)
				p.Root.Children = []*analysis.Node{{Func: 1, Parent: p.Root, Calls: 50, Total: 5e9, Self: 5e9}}
				p.Work, p.TotalCPU = []int64{7e9}, 2e9
				return p
			}(),
			kinds: "self wait",
			first: "main.query takes 100% of all CPU time in its own code",
		},
		{
			name: "nothing to say",
			p: func() *analysis.Profile {
				p := profile(&analysis.Func{Name: "main.a", Calls: 1, Total: 1e6, Sum: 1e6, SelfCPU: 1e5}, &analysis.Func{Name: "main.b", Calls: 1, Total: 1e6, Sum: 1e6, SelfCPU: 1e5})
				p.Work, p.TotalCPU = []int64{1e7}, 1e7
				return p
			}(),
			kinds: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := Findings(tt.p, 5, pathOf(tt.p))
			var kinds []string
			for _, f := range fs {
				kinds = append(kinds, f.Kind)
			}
			if strings.Join(kinds, " ") != tt.kinds {
				t.Errorf("kinds %v, want %q; %+v", kinds, tt.kinds, fs)
			}
			if tt.first != "" && (len(fs) == 0 || !strings.HasPrefix(fs[0].Message, tt.first)) {
				t.Errorf("first finding %+v\nwant it to start %q", fs, tt.first)
			}
		})
	}
}

// TestFindingsTies gives functions of equal CPU time, as the CPU
// profile's ten-millisecond samples often make them: the findings are the
// same every time, whatever order the map of functions is walked in.
func TestFindingsTies(t *testing.T) {
	var funcs []*analysis.Func
	for _, name := range []string{"main.e", "main.c", "main.a", "main.d", "main.b"} {
		funcs = append(funcs, &analysis.Func{Name: name, Calls: 100, Total: 1e9, Sum: 1e9, Self: 1e9, CPU: 1e9, SelfCPU: 1e9})
	}
	var first []Finding
	for i := range 50 {
		p := profile(funcs...)
		p.TotalCPU = 5e9
		fs := Findings(p, 5, nil)
		if len(fs) == 0 || fs[0].Function != "main.a" {
			t.Fatalf("top finding %+v, want main.a's, the first of equals by name", fs)
		}
		if i == 0 {
			first = fs
		} else if !reflect.DeepEqual(fs, first) {
			t.Fatalf("findings differ between runs:\n%+v\n%+v", fs, first)
		}
	}
}
