package query

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/internal/indented"
)

// A Tree is a tree of named boxes: a flame graph, or the chains of calls
// with recursion folded. It is flat, in pre-order, so that it is built
// and walked without recursion (real programs' chains can be tens of
// thousands of calls deep) and sent to the web page as a few arrays.
// Node 0 is the root, which names no function.
type Tree struct {
	Names  []string `json:"names"`  // the functions the nodes name
	Parent []int32  `json:"parent"` // index of each node's parent, -1 for the root
	Name   []int32  `json:"name"`   // index in Names of each node's function, -1 for the root
	Value  []int64  `json:"value_ns"`
	Calls  []uint64 `json:"calls"`
	// Errors counts, by node, the calls it stands for that returned an
	// error; nil for a profile without errors. In the inverted graph a
	// node stands for the calls of the function at the root below it,
	// reached through the node's chain of callers: ErrorCalls counts
	// them, as Calls does only at the root. The page colours boxes by
	// the share that failed.
	Errors     []uint64 `json:"errors,omitempty"`
	ErrorCalls []uint64 `json:"error_calls,omitempty"`
	// Base is each node's value in the base trace, after Diff; Gone
	// holds the base trace's branches missing from this tree.
	Base []int64    `json:"base_ns,omitempty"`
	Gone []GoneNode `json:"gone,omitempty"`
}

// GoneNode is a branch of the base trace with no match in the tree.
type GoneNode struct {
	Path  []string `json:"path"`
	Value int64    `json:"value_ns"`
}

// Len is the number of nodes, the root included.
func (t *Tree) Len() int { return len(t.Parent) }

// builder makes a Tree, merging children of the same name.
type builder struct {
	t     *Tree
	names map[string]int32
	kids  []map[int32]int32 // by node: name index -> child
	// byFunc maps function ids to name indexes, for trees built from a
	// profile.
	byFunc map[uint32]int32
	// drop, when set, says which nodes done leaves out, with what is
	// below them.
	drop func(i int32) bool
}

func newBuilder() *builder {
	b := &builder{t: &Tree{}, names: map[string]int32{}}
	b.add(-1, -1)
	return b
}

func (b *builder) add(parent, name int32) int32 {
	t := b.t
	i := int32(len(t.Parent))
	t.Parent = append(t.Parent, parent)
	t.Name = append(t.Name, name)
	t.Value = append(t.Value, 0)
	t.Calls = append(t.Calls, 0)
	if t.Errors != nil {
		t.Errors = append(t.Errors, 0)
		t.ErrorCalls = append(t.ErrorCalls, 0)
	}
	b.kids = append(b.kids, nil)
	return i
}

func (b *builder) nameIndex(name string) int32 {
	k, ok := b.names[name]
	if !ok {
		k = int32(len(b.t.Names))
		b.t.Names = append(b.t.Names, name)
		b.names[name] = k
	}
	return k
}

// child returns the child of node p named name, adding it if needed.
func (b *builder) child(p int32, name int32) int32 {
	m := b.kids[p]
	if m == nil {
		m = map[int32]int32{}
		b.kids[p] = m
	}
	c, ok := m[name]
	if !ok {
		c = b.add(p, name)
		m[name] = c
	}
	return c
}

// funcName returns the name index of function id of profile p.
func (b *builder) funcName(p *analysis.Profile, id uint32) int32 {
	if b.byFunc == nil {
		b.byFunc = map[uint32]int32{}
	}
	k, ok := b.byFunc[id]
	if !ok {
		k = b.nameIndex(p.Name(id))
		b.byFunc[id] = k
	}
	return k
}

// done orders each node's children by name, as flame graphs do, so that
// the same chains sit at the same places in graphs of different traces,
// and returns the tree in pre-order.
func (b *builder) done() *Tree {
	t := b.t
	n := t.Len()
	kids := make([][]int32, n)
	for i := 1; i < n; i++ {
		if b.drop == nil || !b.drop(int32(i)) {
			kids[t.Parent[i]] = append(kids[t.Parent[i]], int32(i))
		}
	}
	for i := range kids {
		sort.Slice(kids[i], func(a, c int) bool { return t.Names[t.Name[kids[i][a]]] < t.Names[t.Name[kids[i][c]]] })
	}
	out := &Tree{Names: t.Names}
	if t.Errors != nil {
		out.Errors, out.ErrorCalls = []uint64{}, []uint64{}
	}
	order := make([]int32, n) // old index -> new
	stack := []int32{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		order[i] = int32(len(out.Parent))
		p := int32(-1)
		if i != 0 {
			p = order[t.Parent[i]]
		}
		out.Parent = append(out.Parent, p)
		out.Name = append(out.Name, t.Name[i])
		out.Value = append(out.Value, t.Value[i])
		out.Calls = append(out.Calls, t.Calls[i])
		out.copyErrors(t, i)
		for k := len(kids[i]) - 1; k >= 0; k-- {
			stack = append(stack, kids[i][k])
		}
	}
	return out
}

// Weight is what a flame graph's boxes measure.
type Weight string

const (
	Wall   Weight = "wall" // wall time of the calls
	OnCPU  Weight = "cpu"  // time on CPU, from the Go runtime's CPU profile
	OffCPU Weight = "wait" // time off CPU: wall time less CPU time
)

// Weighs returns why t's flame graph cannot be drawn by w, or nil: time
// on and off CPU needs a CPU profile of enough samples, and on CPU some
// in the program's own code. An empty graph would say nothing of why.
func (t *Trace) Weighs(w Weight) error {
	if w == Wall {
		return nil
	}
	p := t.Profile
	switch {
	case p.ThinCPU:
		return fmt.Errorf("%s: its CPU profile holds %s of samples, too few to split time on and off CPU (%s at least: a longer run)", t.Name, indented.Round(time.Duration(p.TotalCPU)), analysis.MinCPU)
	case !p.HasCPU && p.ProfilesLeftOut:
		return fmt.Errorf("%s: %s", t.Name, strings.Join(p.LeftOut, "; "))
	case !p.HasCPU && (p.Meta.Snapshot() || p.End == "capture"):
		// A window or capture asked for none: its advice is record's.
		return fmt.Errorf("%s has no CPU profile to split time on and off CPU (calltrail record --seconds N --cpu captures one with the calls)", t.Name)
	case !p.HasCPU:
		return fmt.Errorf("%s has no CPU profile to split time on and off CPU (record with calltrail run, or CALLTRAIL_PROFILES=cpu)", t.Name)
	case w == OnCPU && p.TotalCPU == 0 && p.TracingCPU == 0:
		return fmt.Errorf("%s: no CPU sample of the profile has a function the filters select on its stack", t.Name)
	case w == OnCPU && p.TotalCPU == 0:
		return fmt.Errorf("%s: no CPU sample in the program's own code: the profile's %s are all calltrail's, recording the calls (report's tracing column); flame --wait draws the time off CPU", t.Name, indented.Round(time.Duration(p.TracingCPU)))
	}
	return nil
}

func (w Weight) of(n *analysis.Node) int64 {
	switch w {
	case OnCPU:
		return n.CPU
	case OffCPU:
		return n.Wait
	}
	return n.Total
}

// self is the part of n's weight not in its traced callees.
func (w Weight) self(n *analysis.Node) int64 {
	if w == Wall {
		return n.Self
	}
	v := w.of(n)
	for _, c := range n.Children {
		v -= w.of(c)
	}
	return max(v, 0)
}

// InvertedDepth is how many levels of callers the inverted flame graph
// shows above each function: building it walks each chain's path, which
// deep recursion would make quadratic.
const InvertedDepth = 1000

// copyErrors appends node i of t's error counts, if t has them.
func (out *Tree) copyErrors(t *Tree, i int32) {
	if t.Errors != nil {
		out.Errors = append(out.Errors, t.Errors[i])
	}
	if t.ErrorCalls != nil {
		out.ErrorCalls = append(out.ErrorCalls, t.ErrorCalls[i])
	}
}

// minShare is the smallest part of the program's time a box of Flame
// must have: a thinner box is not drawn at any zoom the pages offer.
const minShare = 1e-7

// Flame is the flame graph of t the command line and the web UI draw:
// by total time, or by self time inverted; of wall time, or its time on
// or off CPU; against base when it is not nil (by wall time only:
// samples do not compare across runs); boxes too thin to draw left out.
func (t *Trace) Flame(base *Trace, inverted bool, w Weight) *Tree {
	g := FlameGraph(t.Profile, inverted, w)
	cut := int64(float64(g.Value[0]) * minShare)
	if base != nil && w == Wall {
		g.Diff(FlameGraph(base.Profile, inverted, w), cut)
	}
	return g.Prune(cut)
}

// FlameGraph builds the flame graph of profile p: boxes as wide as the
// weight of their chains' calls, callers below callees (for wall time,
// the self time of the calls shown in the box's branch: its calls' time
// without a filter); or, inverted, as
// wide as self time, the functions the time was spent in at the root and
// their callers above them; with the errors of each box's calls when
// the profile has any. It walks the profile's tree without recursion.
func FlameGraph(p *analysis.Profile, inverted bool, w Weight) *Tree {
	if inverted {
		return invertedGraph(p, w)
	}
	b := newBuilder()
	t := b.t
	if failedCalls(p) > 0 {
		t.Errors, t.ErrorCalls = []uint64{0}, []uint64{0}
	}
	type item struct {
		n *analysis.Node
		i int32 // the node's box
	}
	stack := []item{{p.Root, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range it.n.Children {
			k := b.child(it.i, b.funcName(p, c.Func))
			t.Calls[k] += c.Calls
			if t.Errors != nil {
				t.Errors[k] += c.Errors
			}
			if w == Wall {
				// Self time here, added up the tree below: a box holds
				// the calls a filter shows in its branch, though the
				// calls of its own node are left out (main.main, begun
				// before a window) or only some of them shown.
				t.Value[k] += c.Self
			} else {
				t.Value[k] += w.of(c)
				if it.i == 0 {
					t.Value[0] += w.of(c)
				}
			}
			stack = append(stack, item{c, k})
		}
	}
	out := b.done()
	if w == Wall {
		for i := out.Len() - 1; i > 0; i-- { // children come after their parents
			out.Value[out.Parent[i]] += out.Value[i]
		}
	} else {
		out.fit()
	}
	out.ErrorCalls = nil // Calls says it
	return out
}

// invertedGraph is the inverted flame graph: each chain's self time
// along its path, innermost call at the root, up to InvertedDepth
// callers above it. Walking each chain's path up from its innermost call
// would take a million-deep recursion 10^9 steps. Instead a chain's path
// is found from its caller's as a box of the graph, the caller's path
// with the chain's function put first (prepend); and what a chain adds
// to every box of its path is added to the last, then summed up the
// graph at the end. Each step of prepend makes a box of the graph, or
// finds it made: the work is the graph's size, not the paths' lengths.
func invertedGraph(p *analysis.Profile, w Weight) *Tree {
	b := newBuilder()
	t := b.t
	if failedCalls(p) > 0 {
		t.Errors, t.ErrorCalls = []uint64{0}, []uint64{0}
	}
	type key struct{ name, box int32 }
	made := map[key]int32{}
	// prepend returns the box of the path of name, then box's path.
	var prepend func(name, box int32) int32
	prepend = func(name, box int32) int32 {
		if box == 0 {
			return b.child(0, name)
		}
		if c, ok := made[key{name, box}]; ok {
			return c
		}
		c := b.child(prepend(name, t.Parent[box]), t.Name[box])
		made[key{name, box}] = c
		return c
	}
	// Boxes are made for every chain's path, self time or not: its
	// callees' paths are found from its box. Those left with no time are
	// left out at the end: no chain with self time passes through them.
	type item struct {
		n     *analysis.Node
		box   int32 // the last box of the chain's path
		depth int   // the boxes of its path
	}
	stack := []item{{p.Root, 0, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range it.n.Children {
			name := b.funcName(p, c.Func)
			up, depth := it.box, it.depth+1
			if depth > InvertedDepth {
				up, depth = t.Parent[up], InvertedDepth // its outermost caller falls off
			}
			box := prepend(name, up)
			stack = append(stack, item{c, box, depth})
			v := w.self(c)
			if v <= 0 {
				continue
			}
			t.Value[box] += v
			t.Calls[b.child(0, name)] += c.Calls
			if t.Errors != nil {
				t.Errors[box] += c.Errors
				t.ErrorCalls[box] += c.Calls
			}
		}
	}
	for i := t.Len() - 1; i > 0; i-- { // children come after their parents
		up := t.Parent[i]
		t.Value[up] += t.Value[i]
		if t.Errors != nil && up != 0 {
			t.Errors[up] += t.Errors[i]
			t.ErrorCalls[up] += t.ErrorCalls[i]
		}
	}
	b.drop = func(i int32) bool { return t.Value[i] <= 0 }
	return b.done()
}

// fit makes each box at least as wide as its children. Profile samples
// are not exact: a caller's time off CPU can come out a little below the
// sum of its callees'.
func (t *Tree) fit() {
	sum := make([]int64, t.Len())
	for i := t.Len() - 1; i > 0; i-- { // children come after their parents
		t.Value[i] = max(t.Value[i], sum[i])
		sum[t.Parent[i]] += t.Value[i]
	}
	t.Value[0] = max(t.Value[0], sum[0])
}

// children returns each node's children, in order.
func (t *Tree) children() [][]int32 {
	kids := make([][]int32, t.Len())
	for i := 1; i < t.Len(); i++ {
		kids[t.Parent[i]] = append(kids[t.Parent[i]], int32(i))
	}
	return kids
}

// Path returns the names from the root's child down to node i.
func (t *Tree) Path(i int32) []string {
	var p []string
	for ; i > 0; i = t.Parent[i] {
		p = append(p, t.Names[t.Name[i]])
	}
	for a, b := 0, len(p)-1; a < b; a, b = a+1, b-1 {
		p[a], p[b] = p[b], p[a]
	}
	return p
}

// Diff sets Base to the value of the node at the same path of names in
// base. The base's branches with no match, and a value of at least min,
// are listed in Gone, so that what vanished is not lost from the totals.
func (t *Tree) Diff(base *Tree, min int64) {
	t.Base = make([]int64, t.Len())
	match(t, base, func(a, b int32) { t.Base[a] = base.Value[b] }, nil, func(b int32) {
		// A branch's outermost box holds its time; its path says where.
		if base.Value[b] >= min {
			t.Gone = append(t.Gone, GoneNode{base.Path(b), base.Value[b]})
		}
	})
}

// match walks trees a and b at once, pairing the nodes at the same path of
// names: the one matcher of chains between two traces. It calls both for
// each pair, onlyA and onlyB (when not nil) for the outermost node of each
// branch with no match in the other tree.
func match(a, b *Tree, both func(ai, bi int32), onlyA, onlyB func(int32)) {
	ak, bk := a.children(), b.children()
	type pair struct{ a, b int32 }
	stack := []pair{{0, 0}}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		both(p.a, p.b)
		byName := make(map[string]int32, len(bk[p.b]))
		for _, c := range bk[p.b] {
			byName[b.Names[b.Name[c]]] = c
		}
		for _, c := range ak[p.a] {
			if bc, ok := byName[a.Names[a.Name[c]]]; ok {
				stack = append(stack, pair{c, bc})
				delete(byName, a.Names[a.Name[c]])
			} else if onlyA != nil {
				onlyA(c)
			}
		}
		if onlyB != nil {
			for _, c := range bk[p.b] {
				if _, left := byName[b.Names[b.Name[c]]]; left {
					onlyB(c)
				}
			}
		}
	}
}

// subtree returns node i and every node below it, given each node's
// children.
func subtree(i int32, kids [][]int32) []int32 {
	out := []int32{i}
	for k := 0; k < len(out); k++ {
		out = append(out, kids[out[k]]...)
	}
	return out
}

// Prune returns the tree without the boxes, and what lies below them,
// whose value and base are both below min: boxes too thin to draw.
func (t *Tree) Prune(min int64) *Tree {
	if min <= 0 {
		return t
	}
	out := &Tree{Names: t.Names, Gone: t.Gone}
	if t.Errors != nil {
		out.Errors = []uint64{}
	}
	if t.ErrorCalls != nil {
		out.ErrorCalls = []uint64{}
	}
	at := make([]int32, t.Len()) // old index -> new, -1 when left out
	for i := 0; i < t.Len(); i++ {
		p := int32(-1)
		if i > 0 {
			p = at[t.Parent[i]]
			keep := t.Value[i] >= min || t.Base != nil && t.Base[i] >= min
			if p < 0 || !keep {
				at[i] = -1
				continue
			}
		}
		at[i] = int32(len(out.Parent))
		out.Parent = append(out.Parent, p)
		out.Name = append(out.Name, t.Name[i])
		out.Value = append(out.Value, t.Value[i])
		out.Calls = append(out.Calls, t.Calls[i])
		out.copyErrors(t, int32(i))
		if t.Base != nil {
			out.Base = append(out.Base, t.Base[i])
		}
	}
	return out
}
