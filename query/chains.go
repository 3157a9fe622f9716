package query

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/calltrail/calltrail/analysis"
)

// Chain is a distinct chain of calls that reached a function, from a
// goroutine's first traced call down. Recursion is folded (see fold.go):
// a run of the same steps is written once, with the most times it ran,
// and functions calling each other in turn are a cycle step.
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

// Step is one step of a chain: a function, or a cycle of steps that
// called each other in turn. Repeat, when above 1, is how many times the
// chain ran it in a row before going on, at most: main.rec ×30000, or
// (main.even -> main.odd) ×2.
type Step struct {
	Name   string `json:"name,omitempty"`
	Cycle  []Step `json:"cycle,omitempty"`
	Repeat int    `json:"repeat,omitempty"`
}

// Ends returns the functions chains end in, each once, sorted: the
// functions a query matched that were called.
func Ends(chains []Chain) []string {
	var out []string
	for _, c := range chains {
		if len(c.Path) == 0 {
			continue
		}
		s := c.Path[len(c.Path)-1]
		for s.Cycle != nil {
			s = s.Cycle[len(s.Cycle)-1]
		}
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Text writes a chain as "a -> b ×3 -> (c -> d) ×2 -> e", steps
// separated by sep.
func Text(steps []Step, sep string) string {
	var b strings.Builder
	for i, s := range steps {
		if i > 0 {
			b.WriteString(sep)
		}
		if s.Cycle != nil {
			b.WriteString("(" + Text(s.Cycle, sep) + ")")
		} else {
			b.WriteString(s.Name)
		}
		if s.Repeat > 1 {
			b.WriteString(" ×" + strconv.Itoa(s.Repeat))
		}
	}
	return b.String()
}

// Key names a chain with its counts left out: chains that differ only
// in how many times their steps ran, which Chains counts as one, have
// the same key.
func Key(steps []Step) string {
	keys := make([]string, len(steps))
	for i, s := range steps {
		keys[i] = s.key()
	}
	return strings.Join(keys, "\x00")
}

// key names a step as the tree of chains does, counts left out.
func (s Step) key() string {
	if s.Cycle == nil {
		return s.Name
	}
	keys := make([]string, len(s.Cycle))
	for i, c := range s.Cycle {
		keys[i] = c.key()
	}
	return "(" + strings.Join(keys, " -> ") + ")"
}

// folding is the profile's tree of chains with recursion folded: each
// node of the profile's tree maps to the chain it ends, folded.
type folding struct {
	*folder
	tree *Tree
	// at maps the profile nodes that start goroutines or are started,
	// and the goroutines' first calls, to their folded chains: a map of
	// every node took a third of the folding of a deep recursion.
	at map[*analysis.Node]*fstate
	// by folded node: the folded chains, with their counts, of the
	// profile nodes that map to it
	chains [][]*fstate
	fn     []uint32 // folded node -> the function it ends in
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
	fd := newFolder(p.Name)
	f := &folding{folder: fd, at: map[*analysis.Node]*fstate{}}
	spawning := map[*analysis.Node]bool{}
	p.Walk(func(n *analysis.Node) {
		for from := range n.SpawnedFrom {
			spawning[n], spawning[from] = true, true
		}
	})
	count := []int32{0} // by folded node: profile nodes on the walk's path that map to it
	grow := func() {
		for len(f.fn) < fd.b.t.Len() {
			f.fn = append(f.fn, fd.step[len(f.fn)].last())
			count = append(count, 0)
			f.sum = append(f.sum, 0)
			f.max = append(f.max, 0)
			f.panics = append(f.panics, 0)
			f.errors = append(f.errors, 0)
			f.errIDs = append(f.errIDs, nil)
			f.slowest = append(f.slowest, nil)
			f.spawned = append(f.spawned, nil)
			f.chains = append(f.chains, nil)
		}
	}
	grow()
	type frame struct {
		n    *analysis.Node
		s    *fstate // its folded chain
		next int     // the child to visit next
	}
	stack := []frame{{p.Root, fd.root, 0}}
	t := fd.b.t
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(top.n.Children) {
			count[top.s.node]--
			stack = stack[:len(stack)-1]
			continue
		}
		c := top.n.Children[top.next]
		top.next++
		s := fd.push(top.s, c.Func)
		grow()
		k := s.node
		if top.n == p.Root || spawning[c] {
			f.at[c] = s
		}
		f.chains[k] = append(f.chains[k], s)
		count[k]++
		if total, slowest, ok := p.ChainTotal(c); ok {
			// A filter may have left out outer calls and kept inner
			// ones: the analysis counted them call by call.
			t.Value[k] += total
			f.slowest[k] = mergeSlowest(f.slowest[k], slowest, p.Slowest)
		} else if count[k] == 1 {
			// The outermost calls hold the nested ones: the chain's
			// time is theirs, and its slowest calls are among them.
			t.Value[k] += c.Total
			f.slowest[k] = mergeSlowest(f.slowest[k], c.Slowest, p.Slowest)
		}
		t.Calls[k] += c.Calls
		f.sum[k] += c.Total
		f.max[k] = max(f.max[k], c.Max)
		f.panics[k] += c.Panics
		f.errors[k] += c.Errors
		if len(c.ErrorIDs) > 0 {
			if f.errIDs[k] == nil {
				f.errIDs[k] = map[uint32]uint64{}
			}
			for id, n := range c.ErrorIDs {
				f.errIDs[k][id] += n
			}
		}
		stack = append(stack, frame{c, s, 0})
	}
	// Goroutines started from chains: by the folded chain of the
	// goroutine's first call.
	p.Walk(func(n *analysis.Node) {
		for from, c := range n.SpawnedFrom {
			k := f.at[n].node
			if f.spawned[k] == nil {
				f.spawned[k] = map[int32]uint64{}
			}
			f.spawned[k][f.at[from].node] += c
		}
	})
	f.tree = t // not reordered: folded node numbers index the slices above
	return f
}

// root returns the folded node of the first call of chain k's
// goroutines.
func (f *folding) root(k int32) int32 {
	for f.tree.Parent[k] > 0 {
		k = f.tree.Parent[k]
	}
	first := f.step[k].first()
	return f.b.child(0, f.b.nameIndex(f.name(first)))
}

// mergeSlowest keeps the slowest calls of a and b, slowest first, as many
// as a chain keeps (n), or, if that is not known, as the longer of the
// two lists holds.
func mergeSlowest(a, b []analysis.Instance, n int) []analysis.Instance {
	if len(b) == 0 {
		return a
	}
	keep := n
	if keep <= 0 {
		keep = max(len(a), len(b))
	}
	keep = min(keep, len(a)+len(b))
	all := append(append([]analysis.Instance(nil), a...), b...)
	sort.Slice(all, func(i, j int) bool { return analysis.Slower(all[i], all[j]) })
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
	paths := t.paths(groups)
	out := make([]Chain, 0, len(groups))
	for _, k := range groups {
		c := Chain{
			Path:    f.steps(paths[k], true),
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
		c.SpawnedFrom = f.spawners(f.root(k), 5)
		for _, in := range f.slowest[k] {
			c.Slowest = append(c.Slowest, t.call(in))
		}
		out = append(out, c)
	}
	return out, more
}

// paths returns, for each folded node in groups, its chain with each
// step's count the most of the profile's paths folded into it.
func (t *Trace) paths(groups []int32) map[int32]*fstate {
	f := t.fold()
	out := map[int32]*fstate{}
	for _, k := range groups {
		// The deepest first: the levels of a recursion, met in order
		// of depth, each count more than the one before, and merged the
		// other way would each make a state.
		cs := f.chains[k]
		for i := len(cs) - 1; i >= 0; i-- {
			out[k] = merge(out[k], cs[i])
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
		out = append(out, f.steps(f.chain(s.k), false))
	}
	return out
}

// Steps returns the folded chain of a node of the profile's tree, as
// Chains names them, without repeat counts.
func (t *Trace) Steps(n *analysis.Node) []Step { return t.pathSteps(n, false) }

// pathSteps folds n's path alone, as the folding of every chain folds
// it, and returns its steps, with their counts when counts is set.
func (t *Trace) pathSteps(n *analysis.Node, counts bool) []Step {
	fd := newFolder(t.Profile.Name)
	s := fd.root
	for _, fn := range n.Path() {
		s = fd.push(s, fn)
	}
	return fd.steps(s, counts)
}

// SortChains orders chains as Chains does: the most calls first, then
// by their functions' names.
func SortChains(cs []Chain) {
	names := func(c Chain) []string {
		out := make([]string, len(c.Path))
		for i, s := range c.Path {
			out[i] = s.key()
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

// StartedBy returns up to n chains, recursion folded, of parent
// goroutines that started goroutines whose first call is root, a child
// of the profile's root, the most goroutines first.
func (t *Trace) StartedBy(root *analysis.Node, n int) [][]Step {
	f := t.fold()
	return f.spawners(f.at[root].node, n)
}
