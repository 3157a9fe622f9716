package diagnose

import (
	"fmt"
	"github.com/calltrail/calltrail/internal/words"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/internal/indented"
)

// Finding is one thing worth looking at.
type Finding struct {
	Kind     string  `json:"kind"`     // wait, callee, syscall, self, offcpu, churn, errors or lost
	Function string  `json:"function"` // the function it is about, if any
	Message  string  `json:"message"`
	Score    float64 `json:"-"` // share of the goroutines' time it concerns, for ordering
}

// Thresholds below which a finding is not worth a line.
const (
	minShare     = 0.10 // of the program's time or CPU
	minWaitShare = 0.50 // of a function's own time
	churnMin     = 1000 // goroutines
	// minCPU is the CPU time below which the CPU profile holds too few
	// samples to blame anything on.
	minCPU = int64(analysis.MinCPU)
)

// Findings returns at most max findings about p, the strongest first.
// Findings from the CPU profile need at least 50ms of CPU samples. chains
// writes chains of p's tree as every view writes them (the query layer's
// folded chains), each with steps enough to tell it from the others, for
// the findings that name them.
func Findings(p *analysis.Profile, max int, chains func(...*analysis.Node) []string) []Finding {
	var fs []Finding
	wall := programTime(p)
	for _, f := range p.Funcs {
		fs = append(fs, waits(p, f, wall)...)
		fs = append(fs, callees(p, f, wall)...)
		fs = append(fs, syscalls(p, f, wall)...)
	}
	fs = append(fs, self(p, wall)...)
	fs = append(fs, offCPU(p, wall)...)
	fs = append(fs, churn(p)...)
	fs = append(fs, errorFindings(p, chains)...)
	fs = append(fs, lost(p)...)
	// Equal scores (CPU samples come in tens of milliseconds) are ordered
	// by what they say, not by the map's order: the same trace gives the
	// same findings every time.
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].Score != fs[j].Score {
			return fs[i].Score > fs[j].Score
		}
		return fs[i].Kind+fs[i].Function+fs[i].Message < fs[j].Kind+fs[j].Function+fs[j].Message
	})
	if len(fs) > max {
		fs = fs[:max]
	}
	return fs
}

// programTime is the wall time of the goroutines' traced work: the
// measure of "a share of the program". A profile without goroutines'
// figures (a store's) has it as the time of the calls at the roots of its
// chains, which are each goroutine's outermost calls: the same sum. The
// time of goroutines parked for the run is left out (see parked): a
// server's main waiting on its listener, a goroutine waiting for a
// signal. Counted, they made a request's slowest function a small share.
func programTime(p *analysis.Profile) int64 {
	var t int64
	for _, w := range p.Work {
		t += w
	}
	for _, n := range p.Root.Children {
		if len(p.Work) == 0 {
			t += n.Total
		}
		t -= parked(p, n)
	}
	return max(t, 1)
}

// parked returns the time the calls of chain n spent parked: a call or
// two lasting half the run or more, nine tenths of it in their own code
// or untraced callees, off CPU when the trace has a CPU profile to say.
// That is a goroutine serving, or waiting for a signal, more likely than
// slow; 0 if they are not, or the run's length is not known.
func parked(p *analysis.Profile, n *analysis.Node) int64 {
	own := n.Self
	if p.HasCPU {
		own = n.Wait
		for _, c := range n.Children {
			own -= c.Wait
		}
	}
	if p.Duration <= 0 || n.Calls > 2 || 2*n.Total < int64(p.Duration) || 10*own < 9*n.Total {
		return 0
	}
	return own
}

func d(ns int64) string { return indented.Round(time.Duration(ns)).String() }

// own is f's wait on what, with f the innermost traced function.
func own(f *analysis.Func, on string) int64 {
	for _, w := range f.OwnWaits {
		if w.On == on {
			return w.Ns
		}
	}
	return 0
}

func waits(p *analysis.Profile, f *analysis.Func, wall int64) []Finding {
	if !p.HasWaits || len(f.Waits) == 0 || f.Total == 0 {
		return nil
	}
	w := f.Waits[0]
	if w.On == "sync.(*WaitGroup).Wait" {
		return nil // waiting for other goroutines: their figures tell why
	}
	share := float64(min(w.Ns, f.Total)) / float64(f.Total)
	if share < minWaitShare || float64(w.Ns) < minShare*float64(wall) {
		return nil
	}
	// A wait is named where it was waited: its callers wait too,
	// through it, and one wait is one line. A function that waited
	// mostly inside traced callees leaves the line to them.
	if 2*own(f, w.On) < w.Ns {
		return nil
	}
	msg := fmt.Sprintf("%s spends %.0f%% of its time waiting on %s (%s in %s)", f.Name, 100*share, w.On, d(w.Ns), words.Count(f.Calls, "call"))
	if holder := lockHolder(p); holder != nil && (w.On == "sync.(*Mutex).Lock" || w.On == "sync.(*RWMutex).Lock" || w.On == "sync.(*RWMutex).RLock") {
		msg += fmt.Sprintf(", for a lock held in %s", holder.Name)
	}
	msg += ": make the lock's critical section shorter, or avoid the shared lock"
	score := float64(w.Ns) / float64(wall)
	if w.On == "channel receive" || w.On == "channel send" || w.On == "select" {
		msg = fmt.Sprintf("%s spends %.0f%% of its time waiting on a %s (%s in %s): look at what feeds or drains the channel", f.Name, 100*share, w.On, d(w.Ns), words.Count(f.Calls, "call"))
		if share >= 0.9 && (f.Calls <= 2 || outermost(p, f)) {
			// One long wait in a call or two, or in each goroutine
			// that runs nothing else (a context's watcher, database/
			// sql's awaitDone): a goroutine parked on purpose, for a
			// signal or for the end of the work, which costs nothing.
			// Findings about the work rank before it.
			msg += ", unless it is parked on purpose (waiting for a signal, or for the work to end)"
			score /= 10
		}
	}
	return []Finding{{Kind: "wait", Function: f.Name, Message: msg, Score: score}}
}

// outermost reports whether every call of f was a goroutine's outermost.
func outermost(p *analysis.Profile, f *analysis.Func) bool {
	var calls uint64
	for _, n := range p.Root.Children {
		if n.Func == f.ID {
			calls += n.Calls
		}
	}
	return calls == f.Calls
}

// lost says that calls were dropped while recording: every figure and
// finding leaves them out. It ranks first, whatever the share: a chain
// or a cost may be among the calls dropped.
func lost(p *analysis.Profile) []Finding {
	dropped := p.Stats.DroppedCalls
	if dropped == 0 {
		return nil
	}
	var kept uint64
	for _, f := range p.Funcs {
		kept += f.Calls
	}
	msg := fmt.Sprintf("%d of the program's %d calls (%.0f%%) were dropped while recording, and the figures and findings leave them out: record again with CALLTRAIL_FULL=wait (the default), or a larger CALLTRAIL_BUFFER",
		dropped, dropped+kept, 100*float64(dropped)/float64(dropped+kept))
	return []Finding{{Kind: "lost", Message: msg, Score: math.Inf(1)}}
}

// lockHolder is the traced function that released the most contended locks.
func lockHolder(p *analysis.Profile) *analysis.Func {
	var best *analysis.Func
	for _, f := range p.Funcs {
		if f.Held > 0 && (best == nil || f.Held > best.Held) {
			best = f
		}
	}
	return best
}

func callees(p *analysis.Profile, f *analysis.Func, wall int64) []Finding {
	if !p.HasCPU || len(f.Callees) == 0 || p.TotalCPU < minCPU {
		return nil
	}
	// System calls are the syscall rule's: it counts their time off CPU
	// too.
	var c analysis.Wait
	for _, c = range f.Callees {
		if !mostlySyscalls(f, c) {
			break
		}
	}
	if mostlySyscalls(f, c) {
		return nil
	}
	ns := selfBound(f, c.Ns)
	share := float64(ns) / float64(p.TotalCPU)
	if share < minShare {
		return nil
	}
	// Per call, the callee's CPU: the call's wall time would read as
	// what the callee cost.
	msg := fmt.Sprintf("%s spends %.0f%% of %s in %s (%s of CPU over %s of %s, %s a call)",
		f.Name, 100*share, allCPU(p), c.On, d(ns), words.Count(f.Calls, "call"), f.Name, d(ns/int64(max(f.Calls, 1))))
	a := advice(c.On)
	score := float64(ns) / float64(wall)
	if a == noAdvice {
		// A library function that is merely busy ranks below one known
		// to be costly for what it does, with time to match.
		score /= 2
	}
	return []Finding{{Kind: "callee", Function: f.Name, Message: msg + ": " + a, Score: score}}
}

// allCPU names what the CPU shares are of: the program's samples, or,
// under -F, the focused calls' (see analysis.Profile.CPUFocused).
func allCPU(p *analysis.Profile) string {
	if p.CPUFocused() {
		return "the CPU time of the calls shown (-F)"
	}
	return "all CPU time"
}

// mostlySyscalls says whether most of the CPU time f spent in callee c
// was in system calls.
func mostlySyscalls(f *analysis.Func, c analysis.Wait) bool {
	for _, sc := range f.Syscalls {
		if sc.On == c.On {
			return 2*sc.Ns >= c.Ns
		}
	}
	return false
}

// syscalls finds a function whose own time is mostly system calls. Its
// time in them is the CPU the profile saw in them plus its own time off
// CPU that no block or mutex sample explains. That off-CPU time counts
// only when the function's own CPU is mostly system calls: otherwise it
// is more likely the scheduler's delay than a call into the kernel.
func syscalls(p *analysis.Profile, f *analysis.Func, wall int64) []Finding {
	if !p.HasCPU || len(f.Syscalls) == 0 || p.TotalCPU < minCPU {
		return nil
	}
	sys := f.SyscallCPU()
	if 2*sys < f.SelfCPU {
		return nil
	}
	var waited int64
	for _, w := range f.Waits {
		waited += w.Ns
	}
	off := max(f.Self-f.SelfCPU-waited, 0)
	in := sys + off
	share := float64(in) / float64(wall)
	if share < minShare {
		return nil
	}
	var calls []string
	for _, sc := range f.Syscalls {
		if len(calls) == 3 || 10*sc.Ns < sys {
			break
		}
		calls = append(calls, fmt.Sprintf("%s %.0f%%", sc.On, 100*float64(sc.Ns)/float64(sys)))
	}
	msg := fmt.Sprintf("%s spends %.0f%% of the program's time in system calls (%s: %s on CPU, %s off CPU that no block sample explains (the kernel's, or a sleep); %s of %s, %s each), in %s",
		f.Name, 100*share, d(in), d(sys), d(off), words.Count(f.Calls, "call"), f.Name, d(f.Sum/int64(max(f.Calls, 1))), strings.Join(calls, ", "))
	// A sync costs most even where few samples caught it: it waits for
	// the disk.
	a := advice(f.Syscalls[0].On)
	for _, sc := range f.Syscalls {
		if has(sc.On, "Sync") {
			a = advice(sc.On)
		}
	}
	return []Finding{{Kind: "syscall", Function: f.Name, Message: msg + ": " + a, Score: share}}
}

// advice says what to look at for CPU time spent in a library function.
func advice(callee string) string {
	switch {
	case has(callee, "fmt.Errorf", "errors.New"):
		return "an error is built on every call; test without building one"
	case has(callee, "reflect."):
		return "reflection on every call; call the function directly, or generate the code"
	case has(callee, "log.", "(*Logger)", "slog."):
		return "logging on the hot path; remove it, or check the level before formatting"
	case has(callee, "regexp."):
		return "a regular expression on every call; parse with strings functions"
	case has(callee, "(*File).Sync", "syscall.Fsync", "syscall.Fdatasync"):
		return "a file synced to disk on every call; sync less often, or off the hot path"
	case has(callee, "syscall.", "os.(*File).Read", "os.(*File).Write", "internal/poll.", "net."):
		return "a system call per call; buffer the I/O (bufio) or batch it"
	case has(callee, "os."):
		return "a system call per call; do it less often, or off the hot path"
	case has(callee, "encoding/json.", "encoding/gob."):
		return "reflection-based encoding; an encoder written for the type is faster"
	case has(callee, "runtime.newobject", "runtime.mallocgc", "runtime.growslice"):
		return "allocation on every call; reuse buffers"
	case has(callee, "runtime.newproc"):
		return "a goroutine started per call; give each goroutine more work, or use a pool of workers"
	case has(callee, "fmt."):
		return "formatting on every call; format once, or append with strconv"
	}
	return noAdvice
}

const noAdvice = "look at how often it is called, and with what"

func has(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// ownCPU is CPU time in a function's own code: with it innermost among
// traced functions, less the untraced functions it called.
func ownCPU(f *analysis.Func) int64 {
	own := f.SelfCPU
	for _, c := range f.Callees {
		own -= c.Ns
	}
	return selfBound(f, max(own, 0))
}

// selfBound bounds ns, CPU time the profile saw in f's own code or in the
// untraced functions it called, by f's own time as the trace measured it,
// which holds both: samples come every ten milliseconds, and on a short
// run two of them can claim 20ms of a function that ran for 5ms.
func selfBound(f *analysis.Func, ns int64) int64 { return min(ns, f.Self) }

func self(p *analysis.Profile, wall int64) []Finding {
	if len(p.Funcs) < 2 {
		return nil
	}
	if p.ThinCPU || p.HasCPU && p.TotalCPU < minCPU {
		return nil // a CPU profile too thin to judge; wall time would mislead
	}
	if p.HasCPU {
		var top *analysis.Func
		for _, f := range p.Funcs {
			if top == nil || ownCPU(f) > ownCPU(top) || ownCPU(f) == ownCPU(top) && f.Name < top.Name {
				top = f
			}
		}
		share := float64(ownCPU(top)) / float64(p.TotalCPU)
		if share < minShare {
			return nil
		}
		// CPU figures only: the trace's times of the same calls hold
		// their time off CPU, and the tracer's.
		own := ownCPU(top)
		msg := fmt.Sprintf("%s takes %.0f%% of %s in its own code (%s of CPU over %s, %s a call)",
			top.Name, 100*share, allCPU(p), d(own), words.Count(top.Calls, "call"), d(own/int64(max(top.Calls, 1))))
		return []Finding{{Kind: "self", Function: top.Name, Message: msg, Score: float64(ownCPU(top)) / float64(wall)}}
	}
	// Without a CPU profile, time outside traced functions may be spent
	// blocked in an untraced one (a server's accept loop, a read) as well
	// as running: the finding says so rather than blame the code. A call
	// or two that spent there their whole time, half the trace's or more,
	// are more likely a goroutine serving or parked than work: the work's
	// functions are named before them, and they rank after the other
	// findings.
	var top, long *analysis.Func
	for _, f := range p.Funcs {
		switch {
		case f.Calls <= 2 && 10*f.Self >= 9*f.Total && 2*f.Total >= int64(p.Duration):
			if long == nil || f.Self > long.Self || f.Self == long.Self && f.Name < long.Name {
				long = f
			}
		case top == nil || f.Self > top.Self || f.Self == top.Self && f.Name < top.Name:
			top = f
		}
	}
	lasting := long != nil && (top == nil || float64(top.Self) < minShare*float64(wall))
	if lasting {
		top = long
	}
	if top == nil {
		return nil
	}
	share := float64(top.Self) / float64(wall)
	if share < minShare {
		return nil
	}
	msg := fmt.Sprintf("%s takes %.0f%% of the goroutines' traced time outside traced functions (%s, %s each, %s in all): its own code or untraced callees, running or blocked (no CPU profile to tell)",
		top.Name, 100*share, words.Count(top.Calls, "call"), d(top.Sum/int64(max(top.Calls, 1))), d(top.Self))
	score := share
	if lasting {
		msg += "; a call that long is more often blocked (serving, or waiting for a signal) than busy"
		score /= 10
	}
	return []Finding{{Kind: "self", Function: top.Name, Message: msg, Score: score}}
}

// maxBusy is the share of the program's CPUs (GOMAXPROCS over the run)
// past which its goroutines' time off CPU is more likely a wait for its
// own work, on other goroutines (an RPC's client for its server, over
// the network), than a sleep or a slow peer.
const maxBusy = 0.5

// maxLoops is how many calls, each a tenth of the run or longer, offCPU
// takes for goroutines' loops rather than slow calls.
const maxLoops = 16

// offCPU finds functions whose own time is nearly all off CPU on nothing
// the block or mutex profiles name (a sleep, the network, a file, a
// system call in an untraced callee), at least 10% of the program's
// time, and far more of it than the program's other functions spend off
// CPU, in a program that left its CPUs idle at least half the time.
// Time a goroutine waits for a core, which the program's other
// goroutines or other processes hold, falls on every function alike, in
// proportion to its time: a CPU-bound program on a machine busy with
// others had each function two thirds off CPU. Their own time off CPU is
// their chains' less their callees' (see analysis.Profile), which leaves
// out the tracer's; a goroutine parked for the run is no finding.
func offCPU(p *analysis.Profile, wall int64) []Finding {
	procs := max(p.Meta.GOMAXPROCS, 1)
	if !p.HasCPU || p.Duration <= 0 || float64(p.TotalCPU+p.TracingCPU) >= maxBusy*float64(procs)*float64(p.Duration) {
		return nil
	}
	own, self := map[uint32]int64{}, map[uint32]int64{}
	p.Walk(func(n *analysis.Node) {
		if n.Parent == p.Root && parked(p, n) > 0 {
			return
		}
		w := n.Wait
		for _, c := range n.Children {
			w -= c.Wait
		}
		own[n.Func] += max(w, 0)
		self[n.Func] += n.Self
	})
	var allOff, allSelf int64
	for id, off := range own {
		f := p.Funcs[id]
		if f == nil {
			delete(own, id)
			continue
		}
		for _, w := range f.OwnWaits {
			off -= w.Ns
		}
		own[id] = max(off, 0)
		allOff += own[id]
		allSelf += self[id]
	}
	var fs []Finding
	for id, off := range own {
		f := p.Funcs[id]
		if len(f.Syscalls) > 0 && 2*f.SyscallCPU() >= f.SelfCPU {
			continue // the syscall finding's
		}
		share := float64(off) / float64(max(self[id], 1))
		others := float64(allOff-off) / float64(max(allSelf-self[id], 1))
		if float64(off) < minShare*float64(wall) || share < 0.9 || share < others+(1-others)/2 {
			continue
		}
		// Last, for the few left: outermost walks the root's chains.
		if f.Calls <= maxLoops && 10*(f.Sum/int64(max(f.Calls, 1))) >= int64(p.Duration) || outermost(p, f) {
			// A few calls a tenth of the run each or longer: goroutines'
			// loops (an RPC's client, a connection's server), whose
			// time off CPU is a wait for work, for the program's own
			// perhaps, not a slow call. Or calls each a goroutine's
			// outermost: a goroutine per pixel, 65,536 of them, waited
			// for a core in turns, off CPU all alike.
			continue
		}
		on := "on nothing the block profile names"
		if !p.HasWaits {
			on = "on what no block profile here names"
		}
		msg := fmt.Sprintf("%s spends %.0f%% of its own time off CPU, %s (%s over %s, %s a call), where the program's other functions spent %.0f%% of theirs, and it used %.0f%% of its %s: a sleep, a wait for the network or a file, or a system call in an untraced callee",
			f.Name, 100*share, on, d(off), words.Count(f.Calls, "call"), d(off/int64(max(f.Calls, 1))), 100*others,
			100*float64(p.TotalCPU+p.TracingCPU)/(float64(procs)*float64(p.Duration)), words.Count(uint64(procs), "CPU"))
		fs = append(fs, Finding{Kind: "offcpu", Function: f.Name, Message: msg, Score: float64(off) / float64(wall)})
	}
	return fs
}

func churn(p *analysis.Profile) []Finding {
	n := len(p.Lifetimes)
	if n < churnMin {
		return nil
	}
	work := append([]int64(nil), p.Work...)
	sort.Slice(work, func(i, j int) bool { return work[i] < work[j] })
	median := work[n/2]
	var spawned *analysis.Node
	var most uint64
	p.Walk(func(nd *analysis.Node) {
		var c uint64
		for _, k := range nd.SpawnedFrom {
			c += k
		}
		if c > most {
			most, spawned = c, nd
		}
	})
	if median > int64(100*time.Microsecond) {
		return nil
	}
	msg := fmt.Sprintf("%s ran traced code, each for %s of work at the median", words.Count(n, "goroutine"), d(median))
	fn := ""
	if spawned != nil {
		fn = p.Name(spawned.Func)
		msg += fmt.Sprintf("; %d of them ran %s", most, fn)
	}
	// Whose go statement started most of them: a server's, one per
	// connection, is the clients' doing.
	var creator uint32
	for c, k := range p.Creators {
		if k > p.Creators[creator] || k == p.Creators[creator] && c < creator {
			creator = c
		}
	}
	if name := p.Name(creator); creator != 0 && strings.HasPrefix(name, "net/http.(*Server).") {
		msg += fmt.Sprintf("; %s started %d of them, one per connection: the clients opened a connection for few requests each, where keeping connections open (Go's http.Transport keeps 2 idle per host unless MaxIdleConnsPerHost says more) would spare starting them", name, p.Creators[creator])
		return []Finding{{Kind: "churn", Function: fn, Message: msg, Score: 0.5}}
	}
	msg += ": starting a goroutine costs more than such small work; give each goroutine more work, or use a pool of workers"
	return []Finding{{Kind: "churn", Function: fn, Message: msg, Score: 0.5}}
}
