package query

import (
	"fmt"
	"slices"
	"strings"

	"github.com/calltrail/calltrail/analysis"
)

// Folding recursion out of chains.
//
// A chain is folded by writing every run of the same steps, one after
// the other, once, with how many times it ran: main -> rec ×30000, or
// main -> (even -> odd) ×2 -> leaf when two functions call each other.
// A run can hold runs ((a -> b ×2) ×3), and a run left part way through
// is written as the steps it ran (main -> (even -> odd) ×2 -> even).
// Nothing is dropped and nothing is reordered: writing each run out, at
// most its count of times, gives back the path of calls (Reaches), so
// every folded chain is a path that replay shows. Chains that differ only in how many
// times their runs ran are one chain, counted at the most: each step's
// most, which for a chain of two repeated steps may come from two paths.

// maxPeriod bounds the steps of a run the folding looks for. Past it a
// chain is not folded further, which costs only length: recursion
// through more than 64 distinct steps is not met in real programs.
const maxPeriod = 64

// A step of a folded chain: a function entered count times in a row,
// recursively, or a cycle of steps (body) run count times.
//
// A cycle's steps hold the most times each ran in one run of the cycle;
// run is how many times a function ran in the cycle's latest run, which
// the next call can still add to (the second b of a, b, a, b, b).
type step struct {
	fn    uint32
	body  []step // nil for a function
	count int
	run   int
	key   string // the names of its functions, counts left out
}

// first and last return the functions a step enters first and last.
func (s step) first() uint32 {
	for s.body != nil {
		s = s.body[0]
	}
	return s.fn
}

func (s step) last() uint32 {
	for s.body != nil {
		s = s.body[len(s.body)-1]
	}
	return s.fn
}

// period is how many steps one run of s is: a function repeats alone.
func (s step) period() int {
	if s.body == nil {
		return 1
	}
	return len(s.body)
}

// at returns the i-th step of one run of s.
func (s step) at(i int) step {
	if s.body == nil {
		return step{fn: s.fn, count: 1, run: 1, key: s.key}
	}
	return s.body[i]
}

// most returns s with each count the larger of s's and o's, o being a
// step of the same shape and the later one.
func most(s, o step) step {
	s.count, s.run = max(s.count, o.count), o.run
	if s.body != nil {
		body := make([]step, len(s.body))
		for i := range body {
			body[i] = most(s.body[i], o.body[i])
		}
		s.body = body
	}
	return s
}

// A fstate is a folded chain: its last step, and the chain before it.
// States are shared: pushing a call makes a new state and changes none,
// so every call of a tree of calls keeps its own folded chain cheaply.
type fstate struct {
	prev *fstate
	step step
	node int32 // the chain's node in the folder's tree
	n    int   // the chain's steps
}

// A folder folds chains, numbering the distinct ones as the nodes of a
// tree in which a chain's parent is the chain without its last step.
type folder struct {
	b    *builder
	name func(fn uint32) string
	root *fstate
	step []step // by node: its last step, as first made
	tail []*fstate
}

func newFolder(name func(uint32) string) *folder {
	fd := &folder{b: newBuilder(), name: name, step: []step{{}}}
	fd.root = &fstate{}
	return fd
}

// link makes the chain prev followed by s.
func (fd *folder) link(prev *fstate, s step) *fstate {
	k := fd.b.child(prev.node, fd.b.nameIndex(s.key))
	for len(fd.step) < fd.b.t.Len() {
		fd.step = append(fd.step, s)
	}
	return &fstate{prev: prev, step: s, node: k, n: prev.n + 1}
}

// push returns chain s followed by a call of fn, folded.
func (fd *folder) push(s *fstate, fn uint32) *fstate {
	if t := fd.longer(s, fn); t != nil {
		return t
	}
	s = fd.link(s, step{fn: fn, count: 1, run: 1, key: fd.name(fn)})
	for {
		if t := fd.again(s); t != nil {
			s = t
		} else if t := fd.twice(s); t != nil {
			s = t
		} else {
			return s
		}
	}
}

// last fills tail with the last n steps of s, oldest first, and returns
// the state before them.
func (fd *folder) last(s *fstate, n int) (before *fstate) {
	fd.tail = fd.tail[:0]
	for range n {
		fd.tail = append(fd.tail, nil)
	}
	for i := n - 1; i >= 0; i-- {
		fd.tail[i] = s
		s = s.prev
	}
	return s
}

// again folds a run completed once more: the last steps of s are one
// more run of the step just before them (rec after rec ×2, or even,
// odd after (even -> odd) ×2).
func (fd *folder) again(s *fstate) *fstate {
	for p, l := s.prev, 1; p != nil && p.n > 0 && l <= maxPeriod; p, l = p.prev, l+1 {
		if p.step.period() != l {
			continue
		}
		fd.last(s, l)
		same := true
		for i, t := range fd.tail {
			if t.step.key != p.step.at(i).key {
				same = false
				break
			}
		}
		if !same {
			continue
		}
		r := p.step
		if r.body == nil {
			r.count++
			r.run = r.count
			return fd.link(p.prev, r)
		}
		body := make([]step, len(r.body))
		for i := range body {
			body[i] = most(r.body[i], fd.tail[i].step)
		}
		r.body = body
		r.count++
		return fd.link(p.prev, r)
	}
	return nil
}

// longer folds a call of the function a cycle's latest run ended in:
// that function ran once more there.
func (fd *folder) longer(s *fstate, fn uint32) *fstate {
	if s.step.body == nil || s.step.last() != fn {
		return nil
	}
	r, ok := oneMore(s.step)
	if !ok {
		return nil
	}
	return fd.link(s.prev, r)
}

// oneMore returns step s with the function its latest run ended in run
// once more, if that function is its last step.
func oneMore(s step) (step, bool) {
	if s.body == nil {
		s.run++
		s.count = max(s.count, s.run)
		return s, true
	}
	l := s.body[len(s.body)-1]
	if l.body != nil {
		return s, false
	}
	body := slices.Clone(s.body)
	body[len(body)-1], _ = oneMore(l)
	s.body = body
	return s, true
}

// twice folds a run of two or more steps seen twice in a row at the end
// of s into a cycle run twice.
func (fd *folder) twice(s *fstate) *fstate {
	for l := 2; 2*l <= s.n && l <= maxPeriod; l++ {
		before := fd.last(s, 2*l)
		same := true
		for i := range l {
			if fd.tail[i].step.key != fd.tail[l+i].step.key {
				same = false
				break
			}
		}
		if !same {
			continue
		}
		body := make([]step, l)
		keys := make([]string, l)
		for i := range body {
			body[i] = most(fd.tail[i].step, fd.tail[l+i].step)
			keys[i] = body[i].key
		}
		return fd.link(before, step{body: body, count: 2, key: "(" + strings.Join(keys, " -> ") + ")"})
	}
	return nil
}

// steps returns chain s as Steps, outermost first, with its counts when
// counts is set.
func (fd *folder) steps(s *fstate, counts bool) []Step {
	out := make([]Step, s.n)
	for i := s.n - 1; i >= 0; i-- {
		out[i] = fd.export(s.step, counts)
		s = s.prev
	}
	return out
}

func (fd *folder) export(s step, counts bool) Step {
	var out Step
	if s.body == nil {
		out.Name = fd.name(s.fn)
	} else {
		out.Cycle = make([]Step, len(s.body))
		for i, b := range s.body {
			out.Cycle[i] = fd.export(b, counts)
		}
	}
	if counts && s.count > 1 {
		out.Repeat = s.count
	}
	return out
}

// chain returns the state of folded node k as first made, for its
// shape: its steps' counts are those of the first path that made it.
func (fd *folder) chain(k int32) *fstate {
	var nodes []int32
	for a := k; a > 0; a = fd.b.t.Parent[a] {
		nodes = append(nodes, a)
	}
	s := fd.root
	for i := len(nodes) - 1; i >= 0; i-- {
		s = &fstate{prev: s, step: fd.step[nodes[i]], node: nodes[i], n: s.n + 1}
	}
	return s
}

// merge returns chain a with each count the larger of a's and b's, b
// being a chain of the same shape; a nil a is b. It returns a itself
// when no count of b is larger, as for the levels of a deep recursion,
// which fold into one chain: merging them made a state per level. (The
// result is for showing: a run's latest count, run, is not kept.)
func merge(a, b *fstate) *fstate {
	if a == nil {
		return b
	}
	if a == b || a.n == 0 {
		return a
	}
	prev := merge(a.prev, b.prev)
	if prev == a.prev && covers(a.step, b.step) {
		return a
	}
	return &fstate{prev: prev, step: most(a.step, b.step), node: a.node, n: a.n}
}

// covers reports whether each of s's counts is at least o's, o being a
// step of the same shape.
func covers(s, o step) bool {
	if s.count < o.count {
		return false
	}
	for i := range s.body {
		if !covers(s.body[i], o.body[i]) {
			return false
		}
	}
	return true
}

// FoldPath folds recursion in a path of names, outermost first, as Chains
// does.
func FoldPath(names []string) []Step {
	ids := map[string]uint32{}
	var byID []string
	fd := newFolder(func(id uint32) string { return byID[id] })
	s := fd.root
	for _, n := range names {
		id, ok := ids[n]
		if !ok {
			id = uint32(len(byID))
			ids[n] = id
			byID = append(byID, n)
		}
		s = fd.push(s, id)
	}
	return fd.steps(s, true)
}

// Reaches reports whether chain, folded, can be written out as path,
// outermost call first: each of its steps run at least once and at most
// its Repeat times. Every path folded into a chain is one it reaches.
func Reaches(steps []Step, path []string) bool {
	return slices.Contains(ends(steps, path, 0), len(path))
}

// ends returns where in path a match of steps starting at i can end,
// in order. A function's step ends after each of its runs of one to
// Repeat calls; a cycle's after each of its runs, matched again from
// every place the last ended.
func ends(steps []Step, path []string, i int) []int {
	at, next := []int{i}, []int(nil)
	for _, s := range steps {
		next = next[:0]
		for _, j := range at {
			if s.Cycle == nil {
				for k := j; k < len(path) && k-j < max(s.Repeat, 1) && path[k] == s.Name; k++ {
					next = append(next, k+1)
				}
				continue
			}
			cur := []int{j}
			for range max(s.Repeat, 1) {
				var after []int
				for _, k := range cur {
					after = append(after, ends(s.Cycle, path, k)...)
				}
				if len(after) == 0 {
					break
				}
				slices.Sort(after)
				cur = slices.Compact(after)
				next = append(next, cur...)
			}
		}
		if len(at) > 1 || s.Cycle != nil {
			slices.Sort(next)
			next = slices.Compact(next)
		}
		at, next = next, at
	}
	return at
}

// A Folder folds chains one call at a time, as Trace.Chains folds them,
// for readers of a stream of calls such as a store's pusher: each
// goroutine's open calls are a Folded, pushed on at each call.
type Folder struct{ fd *folder }

// Folded is a chain of open calls, folded.
type Folded struct{ s *fstate }

// NewFolder returns a Folder of chains of functions named by name.
func NewFolder(name func(fn uint32) string) *Folder { return &Folder{newFolder(name)} }

// ChainFolder returns a Folder of chains of functions named by name, as
// package analysis asks for one (analysis.Options.Chains): it then counts
// chains' times under filters as Chains shows them.
func ChainFolder(name func(fn uint32) string) analysis.ChainFolder { return NewFolder(name) }

// Fold is Push for package analysis: c is a Folded, or nil for no call.
func (f *Folder) Fold(c any, fn uint32) (any, int32) {
	from := f.Empty()
	if c != nil {
		from = c.(Folded)
	}
	to := f.Push(from, fn)
	return to, to.Chain()
}

// Empty is the chain of no call.
func (f *Folder) Empty() Folded { return Folded{f.fd.root} }

// Push returns chain c with a call of fn inside its innermost call.
func (f *Folder) Push(c Folded, fn uint32) Folded { return Folded{f.fd.push(c.s, fn)} }

// Made returns what Push returns, if the folder has made that chain
// before, and ok false if not: whether a call of fn has been made inside
// c's innermost call, as far as the chains pushed so far tell.
func (f *Folder) Made(c Folded, fn uint32) (Folded, bool) {
	if f.fd.longer(c.s, fn) == nil {
		k, ok := f.fd.b.names[f.fd.name(fn)]
		if !ok {
			return Folded{}, false
		}
		if _, ok := f.fd.b.kids[c.s.node][k]; !ok {
			return Folded{}, false
		}
	}
	return f.Push(c, fn), true
}

// Chain numbers c's chain among the folder's: chains that differ only in
// their counts have the same number; the empty chain is 0.
func (c Folded) Chain() int32 { return c.s.node }

// Steps returns c's steps, with their counts when counts is set.
func (f *Folder) Steps(c Folded, counts bool) []Step { return f.fd.steps(c.s, counts) }

// Counts appends the counts of c's steps to buf in the order Encode
// writes them, and returns it: a function's repeats, and for a cycle 0
// where it begins, then its steps' counts, then its own repeats.
func (c Folded) Counts(buf []uint32) []uint32 {
	start := len(buf)
	for s := c.s; s.n > 0; s = s.prev {
		buf = appendCounts(buf, s.step)
	}
	slices.Reverse(buf[start:])
	return buf
}

// appendCounts appends step s's counts reversed.
func appendCounts(buf []uint32, s step) []uint32 {
	if s.body == nil {
		return append(buf, uint32(s.count))
	}
	buf = append(buf, uint32(s.count))
	for i := len(s.body) - 1; i >= 0; i-- {
		buf = appendCounts(buf, s.body[i])
	}
	return append(buf, 0)
}

// The tokens Encode writes around a cycle's steps. Function tokens are
// odd, so that these are never one.
const (
	CycleStart uint64 = 2
	CycleEnd   uint64 = 4
)

// Encode appends chain steps as tokens: a function's, by fn of its name,
// which must be odd, and a cycle's steps between CycleStart and CycleEnd.
func Encode(tokens []uint64, steps []Step, fn func(name string) uint64) []uint64 {
	for _, s := range steps {
		if s.Cycle == nil {
			tokens = append(tokens, fn(s.Name))
			continue
		}
		tokens = append(tokens, CycleStart)
		tokens = Encode(tokens, s.Cycle, fn)
		tokens = append(tokens, CycleEnd)
	}
	return tokens
}

// Decode returns the steps of tokens that Encode wrote, with counts as
// Counts gives them (nil for none), naming functions by name.
func Decode(tokens []uint64, counts []uint32, name func(token uint64) string) ([]Step, error) {
	i := 0
	var steps func(inner bool) ([]Step, error)
	steps = func(inner bool) ([]Step, error) {
		out := []Step{}
		for i < len(tokens) {
			t := tokens[i]
			count := 0
			if i < len(counts) {
				count = int(counts[i])
			}
			i++
			switch t {
			case CycleEnd:
				if !inner {
					return nil, fmt.Errorf("a cycle ends that did not begin")
				}
				return out, nil
			case CycleStart:
				body, err := steps(true)
				if err != nil {
					return nil, err
				}
				s := Step{Cycle: body}
				if i-1 < len(counts) && counts[i-1] > 1 {
					s.Repeat = int(counts[i-1])
				}
				out = append(out, s)
			default:
				s := Step{Name: name(t)}
				if count > 1 {
					s.Repeat = count
				}
				out = append(out, s)
			}
		}
		if inner {
			return nil, fmt.Errorf("a cycle does not end")
		}
		return out, nil
	}
	return steps(false)
}

// Expand writes a chain out with each cycle run twice and each function
// once: the shortest path of calls that folds to the chain.
func Expand(steps []Step) []string {
	var out []string
	for _, s := range steps {
		if s.Cycle == nil {
			out = append(out, s.Name)
			continue
		}
		body := Expand(s.Cycle)
		out = append(append(out, body...), body...)
	}
	return out
}

// First is the first function of a chain.
func First(steps []Step) string {
	for len(steps) > 0 && steps[0].Cycle != nil {
		steps = steps[0].Cycle
	}
	if len(steps) == 0 {
		return ""
	}
	return steps[0].Name
}
