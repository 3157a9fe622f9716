package query

import (
	"sort"

	"github.com/calltrail/calltrail/analysis"
)

// Chain is a distinct chain of calls that reached a function, from a
// goroutine's first traced call down. Recursion is folded: a chain names
// a function once, with how many times it was entered, recursively, when
// more than once.
type Chain struct {
	Path    []Step `json:"path"`
	Calls   uint64 `json:"calls"`
	TotalNs int64  `json:"total_ns"` // time in the chain's outermost calls: nested recursive calls are inside them
	MeanNs  int64  `json:"mean_ns"`  // mean duration of all its calls
	MaxNs   int64  `json:"max_ns"`
	Panics  uint64 `json:"panics"` // calls left by a panic
	Errors  uint64 `json:"errors"` // calls that returned an error
	// Messages are the errors its calls returned, the most first.
	Messages []ErrorCount `json:"messages,omitempty"`
	// SpawnedFrom are, for chains that ran in goroutines, the chains in
	// the parent goroutines that started them.
	SpawnedFrom [][]Step `json:"spawned_from"`
	Slowest     []Call   `json:"slowest"`
}

// Step is one function of a chain. Repeat, when above 1, is how many
// times the chain entered it before going on: main.rec ×30000.
type Step struct {
	Name   string `json:"name"`
	Repeat int    `json:"repeat,omitempty"`
}

// folding is the profile's tree of chains with recursion folded: each
// node of the profile's tree maps to the node of its chain with every
// re-entered function folded back to its first occurrence.
type folding struct {
	tree *Tree
	of   map[*analysis.Node]int32 // profile node -> folded node
	fn   []uint32                 // folded node -> function id
	// By folded node: the sum of its calls' durations (Tree.Value
	// holds only the outermost ones'), the slowest call, panics, the
	// slowest calls kept, and the folded chains that started
	// goroutines running it.
	sum, max       []int64
	panics, errors []uint64
	errIDs         []map[uint32]uint64
	slowest        [][]analysis.Instance
	spawned        []map[int32]uint64
}

// fold builds the folding once.
func (t *Trace) fold() *folding {
	t.foldOnce.Do(func() { t.folded = fold(t.Profile) })
	return t.folded
}

func fold(p *analysis.Profile) *folding {
	b := newBuilder()
	f := &folding{of: map[*analysis.Node]int32{}, fn: []uint32{0}}
	count := []int32{0} // by folded node: profile nodes on the walk's path that map to it
	grow := func() {
		for len(f.fn) < b.t.Len() {
			f.fn = append(f.fn, 0)
			count = append(count, 0)
			f.sum = append(f.sum, 0)
			f.max = append(f.max, 0)
			f.panics = append(f.panics, 0)
			f.errors = append(f.errors, 0)
			f.errIDs = append(f.errIDs, nil)
			f.slowest = append(f.slowest, nil)
			f.spawned = append(f.spawned, nil)
		}
	}
	f.sum, f.max, f.panics, f.errors, f.errIDs = []int64{0}, []int64{0}, []uint64{0}, []uint64{0}, []map[uint32]uint64{nil}
	f.slowest, f.spawned = [][]analysis.Instance{nil}, []map[int32]uint64{nil}
	type frame struct {
		n    *analysis.Node
		k    int32 // its folded node
		next int   // the child to visit next
	}
	stack := []frame{{p.Root, 0, 0}}
	t := b.t
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(top.n.Children) {
			count[top.k]--
			stack = stack[:len(stack)-1]
			continue
		}
		c := top.n.Children[top.next]
		top.next++
		// Fold: a function already on the folded path is entered
		// again; otherwise the chain goes one step further. The
		// folded path names each function once, so this walk is as
		// long as the number of distinct functions, not the depth.
		k := int32(-1)
		for a := top.k; a > 0; a = t.Parent[a] {
			if f.fn[a] == c.Func {
				k = a
				break
			}
		}
		if k < 0 {
			k = b.child(top.k, b.funcName(p, c.Func))
			grow()
			f.fn[k] = c.Func
		}
		f.of[c] = k
		count[k]++
		if count[k] == 1 {
			t.Value[k] += c.Total // the outermost calls hold the nested ones
		}
		t.Calls[k] += c.Calls
		f.sum[k] += c.Total
		f.max[k] = max(f.max[k], c.Max)
		f.panics[k] += c.Panics
		if c.Errors > 0 {
			f.errors[k] += c.Errors
			if f.errIDs[k] == nil {
				f.errIDs[k] = map[uint32]uint64{}
			}
			for id, n := range c.ErrorIDs {
				f.errIDs[k][id] += n
			}
		}
		f.slowest[k] = mergeSlowest(f.slowest[k], c.Slowest)
		stack = append(stack, frame{c, k, 0})
	}
	// Goroutines started from chains: by the folded chain of the
	// goroutine's first call.
	p.Walk(func(n *analysis.Node) {
		for from, c := range n.SpawnedFrom {
			k := f.of[n]
			if f.spawned[k] == nil {
				f.spawned[k] = map[int32]uint64{}
			}
			f.spawned[k][f.of[from]] += c
		}
	})
	f.tree = b.t // not reordered: folded node numbers index the slices above
	return f
}

// mergeSlowest keeps the slowest calls of a and b, as many as the longer
// of the two lists holds, slowest first.
func mergeSlowest(a, b []analysis.Instance) []analysis.Instance {
	if len(b) == 0 {
		return a
	}
	keep := max(len(a), len(b))
	all := append(append([]analysis.Instance(nil), a...), b...)
	sort.Slice(all, func(i, j int) bool { return all[i].Dur > all[j].Dur })
	return all[:keep]
}

// Chains returns the chains that reached functions ids, the most calls
// first, at most limit of them (0: all), and how many more there are.
func (t *Trace) Chains(ids []uint32, limit int) ([]Chain, int) {
	f := t.fold()
	want := map[uint32]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var groups []int32
	for k := 1; k < f.tree.Len(); k++ {
		if want[f.fn[k]] && f.tree.Calls[k] > 0 {
			groups = append(groups, int32(k))
		}
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if f.tree.Calls[a] != f.tree.Calls[b] {
			return f.tree.Calls[a] > f.tree.Calls[b]
		}
		return pathLess(f.tree.Path(a), f.tree.Path(b))
	})
	more := 0
	if limit > 0 && len(groups) > limit {
		groups, more = groups[:limit], len(groups)-limit
	}
	repeats := t.repeats(groups)
	out := make([]Chain, 0, len(groups))
	for _, k := range groups {
		c := Chain{
			Path:    f.steps(k, repeats[k]),
			Calls:   f.tree.Calls[k],
			TotalNs: f.tree.Value[k],
			MeanNs:  f.sum[k] / int64(max(f.tree.Calls[k], 1)),
			MaxNs:   f.max[k],
			Panics:  f.panics[k],
			Errors:  f.errors[k],
			Slowest: []Call{},
		}
		if f.errIDs[k] != nil {
			c.Messages = t.Errors(f.errIDs[k])
		}
		root := k
		for f.tree.Parent[root] > 0 {
			root = f.tree.Parent[root]
		}
		c.SpawnedFrom = f.spawners(root, 5)
		for _, in := range f.slowest[k] {
			c.Slowest = append(c.Slowest, t.call(in))
		}
		out = append(out, c)
	}
	return out, more
}

// repeats returns, for each folded node in groups, how many times each
// function of its path was entered at most, along the paths of the
// profile's nodes folded into it: a second walk of the profile's tree,
// counting entries of each folded node on the path.
func (t *Trace) repeats(groups []int32) map[int32][]int {
	f := t.fold()
	out := map[int32][]int{}
	if len(groups) == 0 {
		return out
	}
	paths := map[int32][]int32{} // group -> its folded path, outermost first
	for _, k := range groups {
		var p []int32
		for a := k; a > 0; a = f.tree.Parent[a] {
			p = append(p, a)
		}
		for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
			p[i], p[j] = p[j], p[i]
		}
		paths[k] = p
		out[k] = make([]int, len(p))
	}
	count := make([]int, f.tree.Len())
	type frame struct {
		n    *analysis.Node
		next int
	}
	stack := []frame{{t.Profile.Root, 0}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(top.n.Children) {
			if top.n != t.Profile.Root {
				count[f.of[top.n]]--
			}
			stack = stack[:len(stack)-1]
			continue
		}
		c := top.n.Children[top.next]
		top.next++
		k := f.of[c]
		count[k]++
		if r := out[k]; r != nil {
			for i, a := range paths[k] {
				r[i] = max(r[i], count[a])
			}
		}
		stack = append(stack, frame{c, 0})
	}
	return out
}

// steps names folded node k's path, with the repeats given.
func (f *folding) steps(k int32, repeat []int) []Step {
	names := f.tree.Path(k)
	out := make([]Step, len(names))
	for i, n := range names {
		out[i] = Step{Name: n}
		if i < len(repeat) && repeat[i] > 1 {
			out[i].Repeat = repeat[i]
		}
	}
	return out
}

// spawners returns up to n chains that started goroutines whose first
// folded chain is k, the most goroutines first.
func (f *folding) spawners(k int32, n int) [][]Step {
	type from struct {
		k     int32
		count uint64
	}
	var fs []from
	for a, c := range f.spawned[k] {
		fs = append(fs, from{a, c})
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].count != fs[j].count {
			return fs[i].count > fs[j].count
		}
		return pathLess(f.tree.Path(fs[i].k), f.tree.Path(fs[j].k))
	})
	out := [][]Step{}
	for _, s := range fs[:min(len(fs), n)] {
		out = append(out, f.steps(s.k, nil))
	}
	return out
}

// Steps returns the folded chain of a node of the profile's tree, as
// Chains names them, without repeat counts.
func (t *Trace) Steps(n *analysis.Node) []Step {
	f := t.fold()
	return f.steps(f.of[n], nil)
}

// SortChains orders chains as Chains does: the most calls first, then
// by their functions' names.
func SortChains(cs []Chain) {
	names := func(c Chain) []string {
		out := make([]string, len(c.Path))
		for i, s := range c.Path {
			out[i] = s.Name
		}
		return out
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Calls != cs[j].Calls {
			return cs[i].Calls > cs[j].Calls
		}
		return pathLess(names(cs[i]), names(cs[j]))
	})
}

func pathLess(a, b []string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// FoldPath folds recursion in a path of names, outermost first, as Chains
// does: the path names each function once, and a function entered again
// folds the path back to it, counted in its Repeat.
func FoldPath(names []string) []Step {
	type key struct {
		parent int
		name   string
	}
	nodes := map[key]int{}
	parent := []int{-1}
	name := []string{""}
	count := []int{0}
	cur := 0
	for _, n := range names {
		// Back to the function, if the path has it; else one step on.
		k := -1
		for a := cur; a > 0; a = parent[a] {
			if name[a] == n {
				k = a
				break
			}
		}
		if k < 0 {
			var ok bool
			if k, ok = nodes[key{cur, n}]; !ok {
				k = len(parent)
				nodes[key{cur, n}] = k
				parent, name, count = append(parent, cur), append(name, n), append(count, 0)
			}
		}
		count[k]++
		cur = k
	}
	var out []Step
	for a := cur; a > 0; a = parent[a] {
		s := Step{Name: name[a]}
		if count[a] > 1 {
			s.Repeat = count[a]
		}
		out = append(out, s)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// StartedBy returns up to n chains, recursion folded, of parent
// goroutines that started goroutines whose first call is root, a child
// of the profile's root, the most goroutines first.
func (t *Trace) StartedBy(root *analysis.Node, n int) [][]Step {
	f := t.fold()
	return f.spawners(f.of[root], n)
}
