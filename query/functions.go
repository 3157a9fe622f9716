package query

import (
	"sort"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/tracefile"
)

// Function is one function's figures over the whole trace.
type Function struct {
	Name    string `json:"name"`
	Calls   uint64 `json:"calls"`
	TotalNs int64  `json:"total_ns"` // wall time, a recursive call counted once
	SelfNs  int64  `json:"self_ns"`  // time not in traced callees
	MeanNs  int64  `json:"mean_ns"`
	P50Ns   int64  `json:"p50_ns"`
	P99Ns   int64  `json:"p99_ns"`
	MaxNs   int64  `json:"max_ns"`
	Panics  uint64 `json:"panics"`
	Errors  uint64 `json:"errors"` // calls that returned an error
	// With the Go runtime's profiles in the trace: time on CPU in the
	// program's code, on CPU in calltrail's runtime recording the calls
	// (tracing), and off CPU (waiting), which add up to the total; what
	// was waited on, and CPU in blocking system calls, by the untraced
	// function called.
	CPUNs     *int64          `json:"cpu_ns,omitempty"`
	TracingNs *int64          `json:"tracing_ns,omitempty"`
	WaitNs    *int64          `json:"wait_ns,omitempty"`
	Waits     []analysis.Wait `json:"waits,omitempty"`
	Syscalls  []analysis.Wait `json:"syscalls,omitempty"`
	// Mostly says where its own time went, when one thing stands out:
	// "waits on sync.(*Mutex).Lock", "in system calls: os.(*File).Read".
	Mostly string `json:"mostly,omitempty"`
}

func (t *Trace) function(f *analysis.Func) Function {
	fn := Function{
		Name: f.Name, Calls: f.Calls, TotalNs: f.Total, SelfNs: f.Self, MeanNs: int64(f.Mean()),
		P50Ns: int64(f.Quantile(0.5)), P99Ns: int64(f.Quantile(0.99)), MaxNs: f.Max, Panics: f.Panics, Errors: f.Errors,
		Waits: f.Waits, Syscalls: f.Syscalls,
	}
	if t.Profile.HasCPU { // off CPU is the rest: without the CPU profile, unknown
		cpu, tracing, wait := f.CPU, f.Tracing, f.Wait
		fn.CPUNs, fn.TracingNs, fn.WaitNs = &cpu, &tracing, &wait
	}
	switch {
	case len(f.OwnWaits) > 0 && 10*f.OwnWaits[0].Ns >= f.Self:
		// Its own waits, not those of its callees, which say theirs;
		// a wait of 27µs in 2s is no answer to where the time went.
		fn.Mostly = "waits on " + f.OwnWaits[0].On
	case len(f.Syscalls) > 0 && 2*f.SyscallCPU() >= f.SelfCPU:
		fn.Mostly = "in system calls: " + f.Syscalls[0].On
	}
	return fn
}

// SortKeys are the orders Functions knows.
var SortKeys = []string{"self", "total", "calls", "max", "mean", "errors"}

// Functions returns every called function's figures, ordered by key (one
// of SortKeys), largest first; top > 0 keeps the first top.
func (t *Trace) Functions(key string, top int) []Function {
	out := make([]Function, 0, len(t.Profile.Funcs))
	for _, f := range t.Profile.Funcs {
		out = append(out, t.function(f))
	}
	SortFunctions(out, key)
	if top > 0 && top < len(out) {
		out = out[:top]
	}
	return out
}

// SortFunctions orders functions by key, one of SortKeys, largest first,
// then by name: the order of Functions, and of a store's.
func SortFunctions(fs []Function, key string) {
	val := func(f Function) int64 {
		switch key {
		case "total":
			return f.TotalNs
		case "calls":
			return int64(f.Calls)
		case "max":
			return f.MaxNs
		case "mean":
			return f.MeanNs
		case "errors":
			return int64(f.Errors)
		}
		return f.SelfNs
	}
	sort.Slice(fs, func(i, j int) bool {
		if a, b := val(fs[i]), val(fs[j]); a != b {
			return a > b
		}
		return fs[i].Name < fs[j].Name
	})
}

// FunctionView is what the web UI's function view shows of one function.
type FunctionView struct {
	Function
	Location   string  `json:"location"` // file:line of its declaration
	MinNs      int64   `json:"min_ns"`
	Callers    []Edge  `json:"callers"`
	Callees    []Edge  `json:"callees"`
	Chains     []Chain `json:"chains"`
	MoreChains int     `json:"more_chains,omitempty"` // chains not listed
	Histogram  []Bar   `json:"histogram"`
	// ErrorMessages are the errors its calls returned, the most first.
	ErrorMessages []ErrorCount `json:"error_messages"`
}

// Edge is a caller or callee of a function, with the calls between them.
type Edge struct {
	Name    string `json:"name"`
	Calls   uint64 `json:"calls"`
	TotalNs int64  `json:"total_ns"`
}

// StartEdge names the caller of a goroutine's first traced call.
const StartEdge = "(goroutine start)"

// CallSource visits the calls of a function, for the histogram's bars to
// list their slowest calls; nil when the calls are not at hand.
type CallSource func(id uint32, visit func(Call))

// View returns the function view of function id, listing at most
// maxChains chains. calls, if not nil, gives the histogram's bars their
// slowest calls.
func (t *Trace) View(id uint32, maxChains int, calls CallSource) (FunctionView, bool) {
	f := t.Profile.Funcs[id]
	if f == nil {
		return FunctionView{}, false
	}
	v := FunctionView{Function: t.function(f), MinNs: f.Min}
	v.Location = t.Location(id)
	v.Callers, v.Callees = t.edges(id)
	v.Chains, v.MoreChains = t.Chains([]uint32{id}, maxChains)
	v.Histogram = t.Histogram(id, calls)
	v.ErrorMessages = t.Errors(f.ErrorIDs)
	return v, true
}

// edges returns the callers and callees of function id. An edge's time
// is that of its calls not inside another call along the same edge, so
// that recursion through it counts once, as a function's total does:
// then no callee's time is more than the function's.
func (t *Trace) edges(id uint32) (callers, callees []Edge) {
	tab := t.edgeTable()
	list := func(es []edgeSum, other func(k edgeKey) uint32) []Edge {
		out := make([]Edge, 0, len(es))
		for _, e := range es {
			name := StartEdge
			if fn := other(e.key); fn != 0 {
				name = t.Profile.Name(fn)
			}
			out = append(out, Edge{Name: name, Calls: e.calls, TotalNs: e.total})
		}
		return sortEdges(out)
	}
	var in, out []edgeSum
	for _, i := range tab.byCallee[id] {
		in = append(in, tab.in[i])
	}
	for _, i := range tab.byCaller[id] {
		if e := tab.out[i]; e.seen {
			out = append(out, e)
		}
	}
	return list(in, func(k edgeKey) uint32 { return k.caller }), list(out, func(k edgeKey) uint32 { return k.callee })
}

// An edgeKey is a caller and a callee; caller 0 is a goroutine's start.
type edgeKey struct{ caller, callee uint32 }

// edgeSum adds up the tree's nodes along one edge.
type edgeSum struct {
	key   edgeKey
	calls uint64
	total int64 // of the nodes not inside another along the same edge
	seen  bool  // a node was added
}

// edgeTable holds every edge of the call tree, worked out in one walk
// the first time a function's are asked for: each function page would
// otherwise walk the whole tree.
type edgeTable struct {
	// in sums every node along an edge, for the callee's callers; out
	// those with calls, for the caller's callees (a chain of calls
	// that never ended is no callee). Both by edge, in the order found.
	in, out            []edgeSum
	byCaller, byCallee map[uint32][]int32 // edges by function
}

func (t *Trace) edgeTable() *edgeTable {
	t.edgeOnce.Do(func() { t.edgeTab = makeEdgeTable(t.Profile.Root) })
	return t.edgeTab
}

func makeEdgeTable(root *analysis.Node) *edgeTable {
	tab := &edgeTable{byCaller: map[uint32][]int32{}, byCallee: map[uint32][]int32{}}
	index := map[edgeKey]int32{}
	open := map[edgeKey]int{} // edges open on the walk's path
	type frame struct {
		n    *analysis.Node
		next int
	}
	stack := []frame{{root, 0}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		n := top.n
		caller := uint32(0) // the function of n, the callees' caller
		if n != root {
			caller = n.Func
		}
		if top.next == len(n.Children) {
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				k := edgeKey{0, n.Func}
				if p := stack[len(stack)-1].n; p != root {
					k.caller = p.Func
				}
				open[k]--
			}
			continue
		}
		c := n.Children[top.next]
		top.next++
		k := edgeKey{caller, c.Func}
		i, ok := index[k]
		if !ok {
			i = int32(len(tab.in))
			index[k] = i
			tab.in = append(tab.in, edgeSum{key: k})
			tab.out = append(tab.out, edgeSum{key: k})
			tab.byCaller[k.caller] = append(tab.byCaller[k.caller], i)
			tab.byCallee[k.callee] = append(tab.byCallee[k.callee], i)
		}
		outer := open[k] == 0
		tab.in[i].add(c, outer)
		if c.Calls > 0 {
			tab.out[i].add(c, outer)
		}
		open[k]++
		stack = append(stack, frame{c, 0})
	}
	return tab
}

func (e *edgeSum) add(c *analysis.Node, outer bool) {
	e.seen = true
	e.calls += c.Calls
	if outer {
		e.total += c.Total
	}
}

// sortEdges sorts edges by time, then name.
func sortEdges(out []Edge) []Edge {
	sort.Slice(out, func(i, j int) bool {
		if out[i].TotalNs != out[j].TotalNs {
			return out[i].TotalNs > out[j].TotalNs
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Bar is a range of durations in a function's histogram, [LoNs, HiNs),
// with how many calls took that long and the slowest of them.
type Bar struct {
	LoNs    int64  `json:"lo_ns"`
	HiNs    int64  `json:"hi_ns"`
	Count   uint64 `json:"count"`
	Slowest []Call `json:"slowest"`
}

const (
	maxBars    = 24 // bars in a histogram at most
	barSlowest = 20 // calls a bar lists
)

// Histogram returns the durations of function id's calls as at most 24
// bars, each made of whole buckets of the histogram its quantiles come
// from, so that bars and quantiles agree. With calls, each bar lists its
// slowest calls.
func (t *Trace) Histogram(id uint32, calls CallSource) []Bar {
	f := t.Profile.Funcs[id]
	if f == nil {
		return []Bar{}
	}
	bs := f.Buckets()
	per := (len(bs) + maxBars - 1) / maxBars
	bars := []Bar{}
	for i := 0; i < len(bs); i += per {
		group := bs[i:min(i+per, len(bs))]
		b := Bar{LoNs: group[0].Lo, HiNs: group[len(group)-1].Hi, Slowest: []Call{}}
		for _, g := range group {
			b.Count += g.Count
		}
		bars = append(bars, b)
	}
	if calls == nil || len(bars) == 0 {
		return bars
	}
	calls(id, func(c Call) {
		k := sort.Search(len(bars), func(k int) bool { return c.DurationNs < bars[k].HiNs })
		k = min(k, len(bars)-1)
		b := &bars[k]
		if len(b.Slowest) < barSlowest {
			b.Slowest = append(b.Slowest, c)
			return
		}
		last := 0
		for j := range b.Slowest {
			if Slower(b.Slowest[last], b.Slowest[j]) {
				last = j
			}
		}
		if Slower(c, b.Slowest[last]) {
			b.Slowest[last] = c
		}
	})
	for i := range bars {
		s := bars[i].Slowest
		sort.Slice(s, func(a, b int) bool { return Slower(s[a], s[b]) })
	}
	return bars
}

// Slower reports whether call a comes before call b among the slowest,
// as analysis.Slower orders them.
func Slower(a, b Call) bool {
	return analysis.Slower(analysis.Instance{G: a.G, Start: a.StartNs, Dur: a.DurationNs}, analysis.Instance{G: b.G, Start: b.StartNs, Dur: b.DurationNs})
}

// Call is one call of a function.
type Call struct {
	G          uint64           `json:"goroutine"`
	StartNs    int64            `json:"start_ns"` // since the trace started
	DurationNs int64            `json:"duration_ns"`
	Exit       string           `json:"exit,omitempty"`  // how it ended, if not by returning: panic, goexit, unfinished
	Error      *tracefile.Error `json:"error,omitempty"` // the error it returned
}

// call makes the Call of an instance the analysis kept.
func (t *Trace) call(in analysis.Instance) Call {
	c := Call{G: in.G, StartNs: in.Start, DurationNs: in.Dur, Exit: ExitName(in.Exit)}
	if in.Err != 0 {
		e := t.Profile.Error(in.Err)
		c.Error = &e
	}
	return c
}

// ExitName says how a call ended, "" for a return.
func ExitName(k tracefile.ExitKind) string {
	if k == tracefile.Return {
		return ""
	}
	return k.String()
}
