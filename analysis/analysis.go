package analysis

import (
	"container/heap"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/gtable"
	"github.com/calltrail/calltrail/internal/spawn"
	"github.com/calltrail/calltrail/tracefile"
)

// Instance is one call, as kept among the slowest of its chain.
type Instance struct {
	G     uint64
	Start int64 // nanoseconds since the trace started
	Dur   int64
	Exit  tracefile.ExitKind
	Err   uint32 // the error it returned (see Profile.Error), 0 for none
}

// Slower reports whether call a comes before call b among the slowest:
// it lasted longer, or as long and began first, or then ran in the
// goroutine of the lower id. Every list of slowest calls is in this
// order, and keeps its first (the store's too).
func Slower(a, b Instance) bool { return slower(a.Dur, a.Start, a.G, &b) }

// slower is Slower for a call of duration d, started at start in
// goroutine g, without an Instance made for it.
func slower(d, start int64, g uint64, b *Instance) bool {
	if d != b.Dur {
		return d > b.Dur
	}
	if start != b.Start {
		return start < b.Start
	}
	return g < b.G
}

// Node is a node of the calling-context tree: one distinct chain of calls
// from a goroutine's first traced call down to Func.
type Node struct {
	Func uint32
	// up is the depth, counted from 0 at the outermost call, of the
	// innermost of its callers that is a call of the same function, or
	// -1 if none is: a call of this chain is inside that one. A node is
	// its chain, so this is known once, when it is made (from the stack
	// of the goroutine that made it), rather than looked up on every
	// call. Beside Func, it fills what would be padding: a recursion a
	// million calls deep is a million nodes.
	up       int32
	Parent   *Node // nil for the tree's root, which stands for no call
	Children []*Node

	Calls  uint64
	Total  int64 // wall time of its calls added up (a recursive call is another chain)
	Self   int64 // time in the function itself, not in traced callees
	Max    int64
	Panics uint64
	// Errors counts the calls that failed: returned an error other than
	// one of tracefile.Ends (see Profile.Failed). ErrorIDs counts every
	// call that returned an error, ends included, by error (see
	// Profile.Error); nil without errors.
	Errors   uint64
	ErrorIDs map[uint32]uint64

	// With a CPU profile in the trace: time on CPU in the program's
	// code, in calltrail's runtime recording these calls (Tracing), and
	// the rest of the wall time, off CPU (Wait).
	CPU, Tracing, Wait int64

	// Slowest holds up to Options.Slowest calls, slowest first after
	// Analyze returns.
	Slowest []Instance

	// SpawnedFrom counts, for a chain a goroutine ran outermost (its
	// first, or any later one), the chains of the parent goroutine that
	// started goroutines running this chain: each goroutine once.
	SpawnedFrom map[*Node]uint64

	// ByGoroutine splits Calls and Self by goroutine, when
	// Options.ByGoroutine asks for it; nil otherwise.
	ByGoroutine *Shares
	// soleG is, while Analyze runs, the goroutine that made the
	// chain's calls so far if only one did (ByGoroutine nil): Calls and
	// Self are then its share, and need no other count.
	soleG uint64

	hit   *Node            // the child found last: chains repeat
	index map[uint32]*Node // children by function, once there are many
	fn    *Func            // the figures of Func, kept at hand for count
}

// shallow is how many of a goroutine's outermost open calls are walked
// to tell whether a new chain is nested: the calls deeper than that are
// counted by function (goroutine.deep), so that a chain a million calls
// deep costs no walk of a million calls for each new node, and a call
// that shallow pays no count.
const shallow = 32

// Shares split a chain's calls by goroutine.
type Shares struct {
	// Each holds the first MaxShares goroutines to make the chain's
	// calls, in that order; Others adds up the calls of the rest, with G
	// 0.
	Each   []Share
	Others Share

	// index finds a goroutine in Each once there are many: a table of
	// open addressing, each slot its place in Each plus one (0 empty),
	// at least twice the places. A map's lookup, on every call, was a
	// third of the analysis for a pprof export.
	index []int32
}

// Share is the part of a chain's calls made by one goroutine.
type Share struct {
	G     uint64
	Calls uint64
	Self  int64
}

// Path returns the chain's function ids from the outermost call.
func (n *Node) Path() []uint32 {
	var p []uint32
	for ; n != nil && n.Parent != nil; n = n.Parent {
		p = append(p, n.Func)
	}
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// Root returns the first call of n's chain, whose SpawnedFrom says where
// goroutines running the chain were started.
func (n *Node) Root() *Node {
	for n.Parent != nil && n.Parent.Parent != nil {
		n = n.Parent
	}
	return n
}

// child returns n's child of function fn, made if it is new.
func (n *Node) child(fn uint32) (c *Node, made bool) {
	if n.hit != nil && n.hit.Func == fn {
		return n.hit, false
	}
	if n.index != nil {
		if c := n.index[fn]; c != nil {
			n.hit = c
			return c, false
		}
	} else {
		for _, c := range n.Children {
			if c.Func == fn {
				n.hit = c
				return c, false
			}
		}
	}
	c = &Node{Func: fn, Parent: n, up: -1}
	n.Children = append(n.Children, c)
	n.hit = c
	if n.index != nil {
		n.index[fn] = c
	} else if len(n.Children) > 8 {
		n.index = make(map[uint32]*Node, 16)
		for _, c := range n.Children {
			n.index[c.Func] = c
		}
	}
	return c, true
}

// Func holds the figures of one function over the whole trace.
type Func struct {
	ID     uint32
	Name   string
	Calls  uint64
	Total  int64 // wall time, a recursive call counted once
	Self   int64
	Sum    int64
	Min    int64
	Max    int64
	Panics uint64
	// Errors counts the calls that failed (see Profile.Failed), ErrorIDs
	// every call that returned an error by error, ends included (see
	// Profile.Error), and Growth the failed ones and all calls over the
	// run's time.
	Errors   uint64
	ErrorIDs map[uint32]uint64
	Growth   Growth
	hist     histogram
	// Quantiles, when not nil, hold exact quantiles of the calls'
	// durations, by q, for Quantile to return rather than read the
	// histogram: those of a profile made by a store.
	Quantiles map[float64]int64

	// With the Go runtime's profiles in the trace (Profile.HasCPU,
	// HasWaits): time on CPU in the program's code, time on CPU in
	// calltrail's runtime recording its calls and theirs (Tracing), the
	// rest of its wall time, off CPU (Wait), what was waited on, most
	// first, and how long others waited for locks this function
	// released.
	CPU, Tracing, Wait int64
	Waits              []Wait
	// OwnWaits is the part of Waits with this function the innermost
	// traced one: it waited itself, or in an untraced function it
	// called, not inside a traced callee.
	OwnWaits []Wait
	Held     int64
	// Callees splits CPU time spent below the function, outside traced
	// code, by the untraced function it called first ("fmt.Errorf").
	Callees []Wait
	// SelfCPU is CPU time with this function the innermost traced one:
	// its own code and the untraced functions it called.
	SelfCPU int64
	// Syscalls is the part of Callees spent in system calls, by the
	// untraced function called ("os.(*File).Sync").
	Syscalls []Wait
}

// SyscallCPU is the CPU time the function's untraced callees spent in
// system calls, kernel time included.
func (f *Func) SyscallCPU() int64 {
	var t int64
	for _, w := range f.Syscalls {
		t += w.Ns
	}
	return t
}

// Mean is the mean duration of a call.
func (f *Func) Mean() time.Duration {
	if f.Calls == 0 {
		return 0
	}
	return time.Duration(f.Sum / int64(f.Calls))
}

// Quantile returns the duration below which fraction q of the calls
// fall (nearest rank), within about 6%: durations are counted in
// buckets, 16 to a power of two, to keep memory per function, not per
// call. The fastest and slowest calls are exact.
func (f *Func) Quantile(q float64) time.Duration {
	if f.Calls == 0 {
		return 0
	}
	if v, ok := f.Quantiles[q]; ok {
		return time.Duration(v)
	}
	if float64(f.Calls-1) < q*float64(f.Calls) { // the slowest call's rank
		return time.Duration(f.Max)
	}
	return time.Duration(min(max(f.hist.quantile(q, f.Calls), f.Min), f.Max))
}

// Options change what Analyze keeps.
type Options struct {
	Filter *filter.Filter // calls to count; nil for all
	// Slowest is how many of the slowest calls each chain keeps.
	Slowest int
	// OnlyPanics counts, in chains and functions, only calls left by a
	// panic (their callers still make up the chains); OnlyErrors, only
	// calls that failed (see Profile.Failed).
	OnlyPanics, OnlyErrors bool
	// ByGoroutine keeps each chain's figures per goroutine too, for the
	// first MaxShares goroutines to make its calls.
	ByGoroutine bool
	// Chains, given the trace's names of functions, returns the folding
	// of recursion out of chains that chains are shown with (package
	// query's ChainFolder). Under a filter, Analyze needs it to count
	// each chain's time once (see ChainFolder, Profile.ChainTotal);
	// without, a chain whose outer calls the filter left out has no
	// time.
	Chains func(name func(uint32) string) ChainFolder
}

// MaxShares is how many goroutines a chain keeps figures of with
// Options.ByGoroutine: the calls of those past it are added up in
// Shares.Others, so that a server's millions of goroutines cost
// no more than a thousand per chain.
const MaxShares = 1000

// Profile is what Analyze found in a trace.
type Profile struct {
	Root  *Node
	Funcs map[uint32]*Func
	// FuncTable and ErrorTable are the trace's tables: function id i
	// is FuncTable[i-1], error id i (Event.Err) ErrorTable[i-1]. The
	// Profile owns them: the reader it was made from can go. Name and
	// Error look ids up.
	FuncTable  []tracefile.Func
	ErrorTable []tracefile.Error
	// Coverage is what the build traced of each package, and what it
	// left out and why.
	Coverage   []tracefile.Coverage
	Meta       tracefile.Meta
	Duration   time.Duration
	Goroutines int // that made calls the filter selects
	Stats      tracefile.Stats
	End        string
	Ended      bool
	Err        error // what stopped reading, nil at a clean end
	// HasCPU and HasWaits say the trace holds the Go runtime's CPU
	// profile, and its block or mutex profile: then Func and Node have
	// their CPU and Wait times, and Func what it waited on. A CPU profile
	// holding less than MinCPU of samples is too thin to split time on
	// and off CPU: it is left out, with ThinCPU set.
	HasCPU, HasWaits, ThinCPU bool
	// focus is the filter's focus, which a sample's stack must hold a
	// function of to count (see CPUFocused).
	focus *regexp.Regexp
	// ProfilesLeftOut says the analysis read some calls only, and left
	// out the trace's profiles whose samples cannot tell them from the
	// rest: of some requests (tracefile.Reader.Narrowed), the block and
	// mutex profiles, and a CPU profile without span labels
	// (tracefile.SpanLabel); of some goroutine, time, duration or ending
	// (Filter.G, From, To, MinTime, Options.OnlyPanics, OnlyErrors),
	// every profile.
	ProfilesLeftOut bool
	// LeftOut say which profiles ProfilesLeftOut left out, and why: for
	// the views that show time on and off CPU, or waits, to say.
	LeftOut []string
	// ProfileErrors say which of the trace's profiles could not be read.
	ProfileErrors []error
	// Lifetimes are the goroutines' spans from first to last traced
	// event, in nanoseconds, Work their time in traced calls, and Starts
	// the times of their first events; one entry per goroutine, in the
	// same order.
	Lifetimes, Work, Starts []int64
	// Creators counts the goroutines with traced calls by the function
	// that holds their go statement (an id of FuncTable), traced or
	// not: net/http.(*Server).Serve for a server's connections.
	Creators map[uint32]uint64
	// TotalCPU is the CPU time of the program's samples, traced code or
	// not; TracingCPU that of samples in calltrail's own runtime, in
	// traced calls (recording them) or not (its writer).
	TotalCPU, TracingCPU int64
	// Slowest is how many of the slowest calls each chain keeps, as
	// Options.Slowest said.
	Slowest int

	funcs []*Func // Funcs by id, for the analysis's inner loop
	ends  []uint8 // by error id: 1 a failure, 2 an end (see Failed), 0 not known yet
	// reading is the reader Analyze reads, whose tables grow as it
	// reads; nil once Analyze has copied them.
	reading *tracefile.Reader
	// chains are the chains' times counted call by call, under a
	// filter; nil without one.
	chains *chainFold
	// spawns, under a filter, count by the chain that started them the
	// goroutines that made calls the filter selects; nil without one.
	spawns map[*Node]uint64
}

// CheckValid reports whether p is well formed: every node and function
// names a function of the table, every error id one of the error table,
// the tree's links run both ways, counts are within their calls, and
// the per-goroutine slices are as long as each other. Analyze makes
// valid profiles; a store's, or one built by hand, is checked before
// it is trusted.
func (p *Profile) CheckValid() error {
	if p.Root == nil || p.Root.Parent != nil || p.Root.Func != 0 {
		return errors.New("the tree's root is not a root")
	}
	nf, ne := uint32(len(p.FuncTable)), uint32(len(p.ErrorTable))
	checkErrors := func(ids map[uint32]uint64) error {
		for id := range ids {
			if id == 0 || id > ne {
				return fmt.Errorf("error id %d not in the table of %d", id, ne)
			}
		}
		return nil
	}
	inTree := map[*Node]bool{}
	stack := []*Node{p.Root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if inTree[n] {
			return fmt.Errorf("chain of function %d is in the tree twice", n.Func)
		}
		inTree[n] = true
		for _, c := range n.Children {
			if c == nil || c.Parent != n {
				return fmt.Errorf("a child of function %d's chain does not point back to it", n.Func)
			}
			if c.Func == 0 || c.Func > nf {
				return fmt.Errorf("function id %d not in the table of %d", c.Func, nf)
			}
			if c.Panics > c.Calls || c.Errors > c.Calls || c.Total < 0 || c.Self < 0 || c.Max < 0 {
				return fmt.Errorf("chain of %s: %d calls, %d panics, %d errors, total %d, self %d, max %d", p.Name(c.Func), c.Calls, c.Panics, c.Errors, c.Total, c.Self, c.Max)
			}
			if err := checkErrors(c.ErrorIDs); err != nil {
				return fmt.Errorf("chain of %s: %w", p.Name(c.Func), err)
			}
			if sh := c.ByGoroutine; sh != nil {
				calls, self := sh.Others.Calls, sh.Others.Self
				for _, e := range sh.Each {
					calls, self = calls+e.Calls, self+e.Self
				}
				if calls != c.Calls || self != c.Self {
					return fmt.Errorf("chain of %s: %d calls and self %d by goroutine, of %d and %d", p.Name(c.Func), calls, self, c.Calls, c.Self)
				}
			}
			stack = append(stack, c)
		}
	}
	for n := range inTree {
		for from := range n.SpawnedFrom {
			if !inTree[from] {
				return fmt.Errorf("chain of %s: spawned from a chain not in the tree", p.Name(n.Func))
			}
		}
	}
	for id, f := range p.Funcs {
		switch {
		case f == nil || f.ID != id:
			return fmt.Errorf("function %d is listed under id %d", f.ID, id)
		case id == 0 || id > nf:
			return fmt.Errorf("function id %d not in the table of %d", id, nf)
		case f.Name != p.FuncTable[id-1].Name:
			return fmt.Errorf("function %d is named %q, %q in the table", id, f.Name, p.FuncTable[id-1].Name)
		case f.Panics > f.Calls || f.Errors > f.Calls:
			return fmt.Errorf("function %s: %d calls, %d panics, %d errors", f.Name, f.Calls, f.Panics, f.Errors)
		}
		if err := checkErrors(f.ErrorIDs); err != nil {
			return fmt.Errorf("function %s: %w", f.Name, err)
		}
	}
	if len(p.Work) != len(p.Lifetimes) || len(p.Starts) != len(p.Lifetimes) {
		return fmt.Errorf("%d goroutine lifetimes, %d work times, %d starts", len(p.Lifetimes), len(p.Work), len(p.Starts))
	}
	return nil
}

// Health is what reading the trace found wrong with it (see
// tracefile.Health).
func (p *Profile) Health() tracefile.Health {
	return tracefile.Health{Damage: p.Err, NoEnd: !p.Ended, Dropped: p.Stats.DroppedCalls, LostSpans: p.Stats.LostSpans, LostValues: p.Stats.LostErrors, Profiles: p.ProfileErrors}
}

// Name returns the name of function id, "?" for an id not in the table.
func (p *Profile) Name(id uint32) string { return p.Func(id).Name }

// Func returns function id of the table, with its place in the source;
// one named "?" for an id not in it.
func (p *Profile) Func(id uint32) tracefile.Func {
	if id > 0 && int(id) <= len(p.FuncTable) {
		return p.FuncTable[id-1]
	}
	if p.reading != nil {
		return p.reading.Func(id)
	}
	return tracefile.Func{Name: "?"}
}

// Error returns error id of the table, one of type "?" for an id not in
// it.
func (p *Profile) Error(id uint32) tracefile.Error {
	if id > 0 && int(id) <= len(p.ErrorTable) {
		return p.ErrorTable[id-1]
	}
	if p.reading != nil {
		return p.reading.Error(id)
	}
	return tracefile.Error{Type: "?"}
}

type frame struct {
	node     *Node
	start    int64
	children int64
	// inner is the time of the calls of the same function inside this
	// one that a function's total already holds: those counted, and
	// those inside calls left out.
	inner int64
	shown bool
}

type goroutine struct {
	stack   []frame
	tracker filter.Tracker
	pending spawn.Pending[*Node] // goroutines it started, waiting for their chains
	deep    map[uint32]int32     // open calls deeper than shallow, by function
	// chains are, with Profile.chains, what it keeps of each open call,
	// beside stack.
	chains []chainFrame
	shown  int32 // open calls the filter shows
	latest int64 // the time of its latest enter or exit read
}

// inside reports whether g has an open call of fn: whether a new chain
// of fn, called now, is nested in a call of its own function.
func (g *goroutine) inside(fn uint32) bool {
	for i := range min(len(g.stack), shallow) {
		if g.stack[i].node.Func == fn {
			return true
		}
	}
	return g.deep[fn] > 0
}

// innermost returns the depth of g's innermost open call of fn, or -1.
// It looks only if inside says there is one, so that a chain made deep
// in a stack walks it only as far as that call.
func (g *goroutine) innermost(fn uint32) int32 {
	if g.inside(fn) {
		for i := len(g.stack) - 1; i >= 0; i-- {
			if g.stack[i].node.Func == fn {
				return int32(i)
			}
		}
	}
	return -1
}

// span is what Analyze keeps of every goroutine with calls the filter
// selects: from its first to the end of its last, and the time in those
// not inside another (without a filter, its root calls).
type span struct {
	first, last, work int64
	ended             bool // a root call has ended
}

// Analyze reads r to its end.
func Analyze(r *tracefile.Reader, o Options) *Profile {
	f := o.Filter
	if f == nil {
		f = &filter.Filter{}
	}
	p := &Profile{Root: &Node{}, Funcs: map[uint32]*Func{}, Meta: r.Meta(), Slowest: o.Slowest, reading: r}
	// What can leave out a chain's outer call and keep an inner one: a
	// focus under the outer, a window opening after it, how they ended.
	// (Not a duration: the outer call lasts longer.)
	if o.Chains != nil && (f.Focus != nil || f.From != 0 || o.OnlyPanics || o.OnlyErrors) {
		p.chains = &chainFold{f: o.Chains(p.Name), of: map[*Node]*nodeFold{}, slowest: o.Slowest, shownCounts: f.MinTime == 0 && !o.OnlyPanics && !o.OnlyErrors}
	}
	// Goroutines are kept while they have open calls. Events come in runs
	// of one goroutine, so the last one looked up is kept at hand; ids
	// are dense, and a table of them costs a fraction of a map's
	// lookup, insert and delete as goroutines come and go.
	var gs gtable.Table[*goroutine]
	// Every goroutine with calls the filter selects: from the first to
	// the end of the last, and the time in the outermost.
	var spans gtable.Table[span]
	var free []*goroutine // states of goroutines with no open call, to reuse
	var lastID uint64
	var last *goroutine
	// lookup is get's slow path, out of line: it finds the state of id,
	// makes one if create, and keeps it at hand.
	lookup := func(id uint64, create bool) *goroutine {
		var g *goroutine
		if v := gs.Get(id); v != nil {
			g = *v
		}
		if g == nil && create {
			if n := len(free); n > 0 {
				g, free = free[n-1], free[:n-1]
				g.stack = g.stack[:0]
			} else {
				g = &goroutine{}
			}
			g.tracker = *f.NewTracker()
			v, _ := gs.Put(id)
			*v = g
		}
		lastID, last = id, g
		return g
	}
	get := func(id uint64, create bool) *goroutine {
		if id == lastID && last != nil {
			return last
		}
		return lookup(id, create)
	}
	// Goroutines are tied to the chains that started them as a push to
	// the store and the OTLP export tie them.
	// Under a filter, the goroutines summary counts the goroutines that
	// made calls it selects only, known once they are read: by
	// goroutine, the chain that started it.
	var spawnedBy map[uint64]*Node
	if f.G != 0 || f.Focus != nil || f.Hide != nil || f.MaxDepth != 0 || f.MinTime != 0 || f.From != 0 || f.To != 0 || o.OnlyPanics || o.OnlyErrors {
		spawnedBy = map[uint64]*Node{}
	}
	links := spawn.New(0, func(l *spawn.Link[*Node]) {
		if l.HasRoot && l.Creator != 0 && !l.Again {
			if p.Creators == nil {
				p.Creators = map[uint32]uint64{}
			}
			p.Creators[l.Creator]++
		}
		if l.HasRoot && l.HasFrom {
			if l.Root.SpawnedFrom == nil {
				l.Root.SpawnedFrom = map[*Node]uint64{}
			}
			l.Root.SpawnedFrom[l.From]++
			if spawnedBy != nil {
				spawnedBy[l.G] = l.From
			}
		}
	})
	// A goroutine's later root chains were started from where it was
	// too: a server's connection serves requests of every kind.
	links.EveryRoot()
	var stack spawn.Stack[*Node] // a parent's open calls, or nil
	// Without a focus, a function hidden or a depth, the trackers show
	// every call: they are left out, which saves a tenth of the work.
	tracks := f.Focus != nil || f.Hide != nil || f.MaxDepth > 0
	byEnd := o.OnlyPanics || o.OnlyErrors // calls selected by how they ended
	var ev tracefile.Event
	for {
		// Most events come as a Call, in a few instructions and no Event
		// (see ReadCall): reading each whole took a quarter of the
		// analysis. The rest are read whole.
		var (
			kind           tracefile.EventKind
			gid            uint64
			fn, errID      uint32
			t, start, held int64
			exit           tracefile.ExitKind
		)
		if c, ok := r.ReadCall(); ok {
			kind, gid, fn, t, start, exit = c.Kind(), c.G, c.Func(), c.Time, c.Start, c.Exit()
		} else {
			err := r.Read(&ev)
			if err != nil {
				if err != io.EOF {
					p.Err = err
				}
				break
			}
			kind, gid, fn, t, start, exit, errID, held = ev.Kind, ev.G, ev.Func, ev.Time, ev.Start, ev.Exit, ev.Err, ev.Held
		}
		switch kind {
		case tracefile.GoroutineEvent:
			info, _ := r.Goroutine(gid)
			if info.Parent == 0 || !f.Goroutine(gid) {
				continue
			}
			stack = nil
			var pending *spawn.Pending[*Node]
			if parent := gs.Get(info.Parent); parent != nil && *parent != nil {
				stack, pending = *parent, &(*parent).pending
			}
			links.Started(gid, info.Parent, info.CreatorFunc, t, stack, pending)
		case tracefile.EnterEvent:
			if !f.Goroutine(gid) {
				continue
			}
			g := get(gid, true)
			g.latest = t
			shown := true
			if tracks {
				shown, _ = g.tracker.Enter(fn, p.Name)
			}
			shown = shown && f.InWindow(t)
			parent := p.Root
			if len(g.stack) > 0 {
				parent = g.stack[len(g.stack)-1].node
			}
			// The child found last, found with no call: a call on every
			// enter has the loop save and reload what it holds in
			// registers around it.
			n, made := parent.hit, false
			if n == nil || n.Func != fn {
				n, made = parent.child(fn)
			}
			if made {
				n.up, n.fn = g.innermost(fn), p.funcOf(fn)
			}
			if len(g.stack) == 0 || !g.pending.Empty() {
				links.Enter(gid, &g.pending, fn, t, n, g)
			}
			if len(g.stack) >= shallow {
				if g.deep == nil {
					g.deep = map[uint32]int32{}
				}
				g.deep[fn]++
			}
			if p.chains != nil {
				g.chains = p.chains.enter(n, g.stack, g.chains)
			}
			// Field by field into the slot: a frame built aside is
			// copied in with wide loads of its narrow stores, which the
			// CPU cannot forward, and stalls on (a fifth of the time of
			// report over a deep recursion).
			if len(g.stack) == cap(g.stack) {
				g.stack = append(g.stack, frame{})
			} else {
				g.stack = g.stack[:len(g.stack)+1]
			}
			top := &g.stack[len(g.stack)-1]
			top.node, top.start, top.children, top.inner, top.shown = n, t, 0, 0, shown
			if shown {
				g.shown++
			}
		case tracefile.ExitEvent:
			g := get(gid, false)
			if g == nil || len(g.stack) == 0 {
				continue
			}
			g.latest = t
			if !g.pending.Empty() {
				links.Exit(&g.pending, t, g)
			}
			if tracks {
				g.tracker.Exit()
			}
			fr := &g.stack[len(g.stack)-1] // valid until the next call's push
			g.stack = g.stack[:len(g.stack)-1]
			if len(g.stack) >= shallow {
				if g.deep[fr.node.Func]--; g.deep[fr.node.Func] == 0 {
					delete(g.deep, fr.node.Func)
				}
			}
			d := t - start - held // as Event.Duration
			counted := fr.shown && f.Long(time.Duration(d)) && (!byEnd || !(o.OnlyPanics && exit != tracefile.Panic || o.OnlyErrors && !p.Failed(errID)))
			// A function's total holds each of its calls counted that is
			// not inside another counted: a recursive function's time
			// once, though its outer calls be left out (by -F, a window,
			// --panics) and inner ones counted. So a call passes to the
			// same function's call around it the time the total holds
			// of it: its own if counted, else that of the calls inside.
			if up := fr.node.up; up >= 0 {
				if counted {
					g.stack[up].inner += d
				} else {
					g.stack[up].inner += fr.inner
				}
			}
			if p.chains != nil {
				g.chains = p.chains.exit(Instance{G: gid, Start: start, Dur: d, Exit: exit, Err: errID}, counted, g.stack, g.chains)
			}
			if fr.shown {
				g.shown--
			}
			if counted && g.shown == 0 {
				// The goroutine's time in calls the filter selects: its
				// outermost ones, its root calls without a filter.
				sp, _ := spans.Put(gid)
				if !sp.ended {
					sp.first, sp.ended = start, true
				}
				sp.last, sp.work = t, sp.work+d
			}
			if len(g.stack) == 0 {
				// A fresh state is the same as an empty one.
				gs.Delete(gid)
				links.Idle(gid, &g.pending, fr.node.Func, fr.node)
				if len(free) < 1024 {
					free = append(free, g)
				}
				last = nil
			}
			if !fr.shown || !f.Long(time.Duration(d)) {
				// A call the filter leaves out counts as its
				// caller's own time, as if inlined.
				continue
			}
			if len(g.stack) > 0 {
				g.stack[len(g.stack)-1].children += d
			}
			if !counted {
				continue
			}
			// Counted with no call on the usual path (see count).
			n, fig, self := fr.node, fr.node.fn, d-fr.children
			n.count(d, self)
			fig.count(d, self, d-fr.inner)
			fig.hist.add(d)
			if exit == tracefile.Panic {
				n.Panics++
				fig.Panics++
			}
			if errID != 0 {
				p.countError(n, &Instance{G: gid, Start: start, Dur: d, Exit: exit, Err: errID})
			} else if !fig.Growth.tryAdd(start) {
				fig.Growth.add(start, false)
			}
			// A call no slower than the fastest of a full list is not
			// among the slowest: most calls, which so need no copy kept.
			if o.Slowest > 0 && (len(n.Slowest) < o.Slowest || slower(d, start, gid, &n.Slowest[0])) {
				keepSlow(n, &Instance{G: gid, Start: start, Dur: d, Exit: exit, Err: errID}, o.Slowest)
			}
			if o.ByGoroutine {
				// Most chains are run by one goroutine: their own
				// counts, which have just taken this call in, are its
				// share until another comes.
				switch {
				case n.ByGoroutine == nil && n.Calls == 1:
					n.soleG = gid
				case n.ByGoroutine == nil && n.soleG == gid:
				default:
					if n.ByGoroutine == nil {
						n.ByGoroutine = &Shares{Each: []Share{{G: n.soleG, Calls: n.Calls - 1, Self: n.Self - self}}}
					}
					sh := n.ByGoroutine.of(gid)
					sh.Calls++
					sh.Self += self
				}
			}
		}
	}
	if o.ByGoroutine {
		p.Walk(func(n *Node) {
			if n.ByGoroutine == nil && n.Calls > 0 {
				n.ByGoroutine = &Shares{Each: []Share{{G: n.soleG, Calls: n.Calls, Self: n.Self}}}
			}
		})
	}
	// The functions with calls counted, their figures made with their
	// first chain.
	for _, fn := range p.funcs {
		if fn != nil && fn.Calls > 0 {
			p.Funcs[fn.ID] = fn
		}
	}
	p.Goroutines = spans.Len()
	if spawnedBy != nil {
		p.spawns = map[*Node]uint64{}
		for g, from := range spawnedBy {
			if sp := spans.Get(g); sp != nil && sp.ended {
				p.spawns[from]++
			}
		}
	}
	ended := 0
	spans.Range(func(_ uint64, sp *span) bool {
		if sp.ended {
			ended++
		}
		return true
	})
	p.Lifetimes, p.Work, p.Starts = make([]int64, 0, ended), make([]int64, 0, ended), make([]int64, 0, ended)
	spans.Range(func(_ uint64, sp *span) bool {
		if sp.ended {
			p.Lifetimes = append(p.Lifetimes, max(sp.last-sp.first, 0))
			p.Work = append(p.Work, sp.work)
			p.Starts = append(p.Starts, sp.first)
		}
		return true
	})
	p.Duration = time.Duration(r.MaxTime())
	p.Stats = r.Stats()
	p.End, p.Ended = r.End()
	p.Walk(func(n *Node) {
		sort.Slice(n.Slowest, func(i, j int) bool { return Slower(n.Slowest[i], n.Slowest[j]) })
	})
	if pp := r.Profiles(); pp != nil {
		var keep func(tracefile.SpanID) bool
		if r.Narrowed() {
			keep = r.KeepsSpan
		}
		if why := bySample(f, o); why != "" {
			// The profiles' samples say neither when nor in which
			// goroutine they were taken, nor in which call of a
			// function: set beside some calls of the run, the whole
			// run's CPU time put 70ms of it in one call of 4ms.
			var kinds []string
			for _, kind := range []string{"CPU", "block", "mutex"} {
				if _, ok := pp[strings.ToLower(kind)]; ok {
					kinds = append(kinds, kind)
				}
			}
			if len(kinds) > 0 {
				p.ProfilesLeftOut = true
				p.LeftOut = append(p.LeftOut, fmt.Sprintf("the trace's %s profiles are the whole run's, not the calls %s selects: left out of their time", strings.Join(kinds, ", "), why))
			}
		} else {
			p.focus = f.Focus
			p.splitProfiles(pp, r.Func, keep)
		}
	}
	p.FuncTable = make([]tracefile.Func, r.NumFuncs())
	for i := range p.FuncTable {
		p.FuncTable[i] = r.Func(uint32(i + 1))
	}
	p.ErrorTable = make([]tracefile.Error, r.NumErrors())
	for i := range p.ErrorTable {
		p.ErrorTable[i] = r.Error(uint32(i + 1))
	}
	p.Coverage = r.Coverage()
	p.reading = nil
	return p
}

// bySample names the options of f and o that select calls in a way a
// profile's samples cannot follow, or returns "": by goroutine, time,
// duration, or how they ended. A focus they can follow, by the functions
// on a sample's stack; hidden calls and a depth need nothing, their time
// being their callers'.
func bySample(f *filter.Filter, o Options) string {
	var by []string
	if f.G != 0 {
		by = append(by, "-g")
	}
	if f.From != 0 || f.To != 0 {
		by = append(by, "-window")
	}
	if f.MinTime != 0 {
		by = append(by, "-t")
	}
	if o.OnlyPanics {
		by = append(by, "--panics")
	}
	if o.OnlyErrors {
		by = append(by, "--errors")
	}
	return strings.Join(by, " ")
}

// of returns the Share of goroutine g.
func (s *Shares) of(g uint64) *Share {
	if k := len(s.Each); k > 0 && s.Each[k-1].G == g {
		return &s.Each[k-1] // a goroutine's calls of a chain come in runs
	}
	if s.index != nil {
		mask := uint64(len(s.index) - 1)
		for h := shareHash(g) & mask; s.index[h] != 0; h = (h + 1) & mask {
			if sh := &s.Each[s.index[h]-1]; sh.G == g {
				return sh
			}
		}
	} else {
		for i := range s.Each {
			if s.Each[i].G == g {
				return &s.Each[i]
			}
		}
	}
	if len(s.Each) >= MaxShares {
		return &s.Others
	}
	s.Each = append(s.Each, Share{G: g})
	switch k := len(s.Each); {
	case k == 16, k > 16 && 2*k > len(s.index):
		// Past a few, scanning costs more than an index; an index
		// half full is made twice as large.
		s.index = make([]int32, 1<<bits.Len(uint(4*k-1)))
		for i := range s.Each {
			s.place(i)
		}
	case k > 16:
		s.place(k - 1)
	}
	return &s.Each[len(s.Each)-1]
}

// place puts Each[i] in the index.
func (s *Shares) place(i int) {
	mask := uint64(len(s.index) - 1)
	h := shareHash(s.Each[i].G) & mask
	for s.index[h] != 0 {
		h = (h + 1) & mask
	}
	s.index[h] = int32(i + 1)
}

// shareHash spreads goroutine ids, which are dense, over the index.
func shareHash(g uint64) uint64 { return g * 0x9e3779b97f4a7c15 >> 32 }

// Len, At and Latest make a goroutine's open calls a spawn.Stack.
func (g *goroutine) Len() int { return len(g.stack) }

func (g *goroutine) Latest() int64 { return g.latest }

func (g *goroutine) At(i int) (uint32, *Node) {
	n := g.stack[i].node
	return n.Func, n
}

// Callee makes them a spawn.Callees: the chain of a call of fn the i-th
// made, if the tree holds one: that path has been read, in this
// goroutine or another.
func (g *goroutine) Callee(i int, fn uint32) (*Node, bool) {
	for _, c := range g.stack[i].node.Children {
		if c.Func == fn {
			return c, true
		}
	}
	return nil, false
}

// count counts a call of duration d, self in its own code, in the
// chain's figures. It and Func.count are the usual call's counts, small
// enough to be inlined into the analysis's loop: a call in it, on every
// exit, had the loop save and reload what it holds in registers around
// it (an eighth of the analysis's instructions). What most calls lack,
// panics, errors and the slowest, Analyze counts after them.
func (n *Node) count(d, self int64) {
	n.Calls++
	n.Total += d
	n.Self += self
	n.Max = max(n.Max, d)
}

// count counts a call of duration d, self in its own code, in the
// function's figures, total of it in no other call of the function: all
// but the histogram, whose growth would make it too large to inline.
func (f *Func) count(d, self, total int64) {
	if f.Calls == 0 || d < f.Min {
		f.Min = d
	}
	f.Calls++
	f.Sum += d
	f.Self += self
	f.Max = max(f.Max, d)
	f.Total += total
}

// countError counts call in of chain n, which returned an error.
func (p *Profile) countError(n *Node, in *Instance) {
	f := n.fn
	failed := p.Failed(in.Err)
	if failed {
		n.Errors++
		f.Errors++
	}
	n.ErrorIDs = countError(n.ErrorIDs, in.Err)
	f.ErrorIDs = countError(f.ErrorIDs, in.Err)
	if failed || !f.Growth.tryAdd(in.Start) {
		f.Growth.add(in.Start, failed)
	}
}

// keepSlow keeps in among n's slowest calls, of which it is one.
func keepSlow(n *Node, in *Instance, slowest int) {
	if len(n.Slowest) < slowest {
		heap.Push((*instances)(&n.Slowest), *in)
	} else {
		n.Slowest[0] = *in
		heap.Fix((*instances)(&n.Slowest), 0)
	}
}

// funcOf returns the figures of function fn, made if new. Funcs holds
// them once their first call is counted (see Analyze).
func (p *Profile) funcOf(fn uint32) *Func {
	if int(fn) >= len(p.funcs) {
		p.funcs = append(p.funcs, make([]*Func, int(fn)+1-len(p.funcs))...)
	}
	f := p.funcs[fn]
	if f == nil {
		f = &Func{ID: fn, Name: p.Name(fn)}
		p.funcs[fn] = f
	}
	return f
}

// Failed reports whether a call that returned error id (0: none) failed:
// it returned an error, and not one of tracefile.Ends.
func (p *Profile) Failed(id uint32) bool {
	if id == 0 {
		return false
	}
	for int(id) >= len(p.ends) {
		p.ends = append(p.ends, 0)
	}
	if p.ends[id] == 0 {
		p.ends[id] = 1
		if p.Error(id).End() {
			p.ends[id] = 2
		}
	}
	return p.ends[id] == 1
}

func countError(m map[uint32]uint64, id uint32) map[uint32]uint64 {
	if m == nil {
		m = map[uint32]uint64{}
	}
	m[id]++
	return m
}

// instances is a heap of the slowest calls, the last of them (Slower) on
// top.
type instances []Instance

func (h instances) Len() int           { return len(h) }
func (h instances) Less(i, j int) bool { return Slower(h[j], h[i]) }
func (h instances) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *instances) Push(x any)        { *h = append(*h, x.(Instance)) }
func (h *instances) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Walk calls fn for every chain, parents before children.
func (p *Profile) Walk(fn func(n *Node)) {
	p.WalkPaths(func(path []*Node) { fn(path[len(path)-1]) })
}

// WalkPaths calls fn for every chain, parents before children, with the
// chain's nodes from the outermost call: path[len(path)-1] is the chain's
// own node. path is reused: fn must copy what it keeps. It walks without
// recursion, in time linear in the number of chains, however deep.
func (p *Profile) WalkPaths(fn func(path []*Node)) {
	type frame struct {
		n    *Node
		next int
	}
	var path []*Node
	stack := []frame{{p.Root, 0}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(top.n.Children) {
			stack = stack[:len(stack)-1]
			if len(path) > 0 {
				path = path[:len(path)-1]
			}
			continue
		}
		c := top.n.Children[top.next]
		top.next++
		if len(stack) == cap(stack) {
			// Twice the room, where append gives a quarter more past
			// a few hundred: down a recursion a million deep, append
			// copied both five times over: diff took a sixth longer.
			stack = slices.Grow(stack, len(stack))
			path = slices.Grow(path, len(stack))
		}
		path = append(path, c)
		fn(path)
		stack = append(stack, frame{c, 0})
	}
}

// Nodes returns every chain ending in function fn, the most calls first.
func (p *Profile) Nodes(fn uint32) []*Node {
	// A walk with each node's children in order of name finds the chains
	// in order of their paths' names; the stable sort keeps that order
	// among chains of as many calls. (Comparing paths instead would cost
	// a chain's depth per comparison: too much for deep recursion.)
	var out []*Node
	stack := []*Node{p.Root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Func == fn && n.Parent != nil && n.Calls > 0 {
			out = append(out, n)
		}
		kids := append([]*Node(nil), n.Children...)
		sort.Slice(kids, func(i, j int) bool { return p.Name(kids[i].Func) > p.Name(kids[j].Func) })
		stack = append(stack, kids...) // the first by name on top
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Calls > out[j].Calls })
	return out
}

func pathLess(a, b []uint32, name func(uint32) string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return name(a[i]) < name(b[i])
		}
	}
	return len(a) < len(b)
}
