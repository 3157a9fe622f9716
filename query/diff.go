package query

import (
	"math"
	"sort"
)

// Change is how one function, or one chain, changed between two traces.
// Functions compare self time, chains the time of their outermost calls.
type Change struct {
	Name      string `json:"name,omitempty"`  // a function
	Chain     []Step `json:"chain,omitempty"` // or a chain, recursion folded
	BaseCalls uint64 `json:"base_calls"`
	NewCalls  uint64 `json:"new_calls"`
	BaseNs    int64  `json:"base_ns"`
	NewNs     int64  `json:"new_ns"`
	DeltaNs   int64  `json:"delta_ns"`
	// Calls that returned an error, before and after.
	BaseErrors uint64 `json:"base_errors"`
	NewErrors  uint64 `json:"new_errors"`
	Appeared   bool   `json:"appeared,omitempty"` // only in the new trace
	Vanished   bool   `json:"vanished,omitempty"` // only in the base trace
}

// Diff is what changed from one trace to another.
type Diff struct {
	Functions []Change `json:"functions"`
	Chains    []Change `json:"chains"`
	// Errors are the functions whose share of failed calls changed,
	// the largest change first.
	Errors []Change `json:"errors"`
}

// Same reports whether nothing changed: no function or chain appeared or
// vanished, or changed its calls, time or errors.
func (d Diff) Same() bool {
	for _, cs := range [][]Change{d.Functions, d.Chains, d.Errors} {
		for _, c := range cs {
			if c.Appeared || c.Vanished || c.DeltaNs != 0 || c.BaseNs != c.NewNs || c.BaseCalls != c.NewCalls || c.BaseErrors != c.NewErrors {
				return false
			}
		}
	}
	return true
}

// ErrorRate is the share of calls that failed, before and after: 0 for
// a function not called.
func (c Change) ErrorRate() (base, cur float64) {
	if c.BaseCalls > 0 {
		base = float64(c.BaseErrors) / float64(c.BaseCalls)
	}
	if c.NewCalls > 0 {
		cur = float64(c.NewErrors) / float64(c.NewCalls)
	}
	return base, cur
}

// Compare compares trace cur with base, function by function and chain
// by chain, the largest changes first, at most top of each (0: all).
// Functions and chains are matched by name, as ids differ between traces;
// chains by walking both traces' trees of chains at once.
func Compare(base, cur *Trace, top int) Diff {
	return compare(&Side{base.functions(), base.fold()}, &Side{cur.functions(), cur.fold()}, top)
}

// A Side is what Compare needs of a trace, and no more: its functions'
// figures and its chains, recursion folded, but not its call tree, which
// can be a thousand times larger (a recursion a million calls deep makes
// a million chains, and folds to one). A diff of two large traces holds
// one tree at a time.
type Side struct {
	funcs []Function
	f     *folding
}

// Side returns what Compare needs of t.
func (t *Trace) Side() *Side {
	f := fold(t.Profile)
	// Compare needs the folded chains and their errors: the rest, the
	// tree's nodes among it, can go.
	f.at, f.chains, f.slowest, f.spawned, f.errIDs = nil, nil, nil, nil, nil
	return &Side{t.functions(), f}
}

// Compare compares cur with base as Compare does.
func (base *Side) Compare(cur *Side, top int) Diff { return compare(base, cur, top) }

func (t *Trace) functions() []Function {
	out := make([]Function, 0, len(t.Profile.Funcs))
	for _, f := range t.Profile.Funcs {
		out = append(out, Function{Name: f.Name, Calls: f.Calls, SelfNs: f.Self, Errors: f.Errors})
	}
	return out
}

func compare(base, cur *Side, top int) Diff {
	af, bf := cur.f, base.f
	a, b := af.tree, bf.tree
	akids, bkids := a.children(), b.children()
	var chains []Change
	add := func(f *folding, i int32, c Change) {
		c.Chain = f.steps(f.chain(i), false)
		if c.BaseCalls+c.NewCalls > 0 {
			chains = append(chains, c)
		}
	}
	match(a, b, func(ai, bi int32) {
		if ai > 0 {
			add(af, ai, Change{BaseCalls: b.Calls[bi], BaseNs: b.Value[bi], BaseErrors: bf.errors[bi],
				NewCalls: a.Calls[ai], NewNs: a.Value[ai], NewErrors: af.errors[ai]})
		}
	}, func(ai int32) {
		for _, i := range subtree(ai, akids) {
			add(af, i, Change{NewCalls: a.Calls[i], NewNs: a.Value[i], NewErrors: af.errors[i], Appeared: true})
		}
	}, func(bi int32) {
		for _, i := range subtree(bi, bkids) {
			add(bf, i, Change{BaseCalls: b.Calls[i], BaseNs: b.Value[i], BaseErrors: bf.errors[i], Vanished: true})
		}
	})
	return Changes(base.funcs, cur.funcs, chains, top)
}

// Changes is the Diff of functions' figures before and after (their
// calls, self time and errors), and of chains' changes, the largest of
// each first, at most top (0: all): Compare's, for figures from
// elsewhere, such as a store.
func Changes(base, cur []Function, chains []Change, top int) Diff {
	fm := map[string]*Change{}
	for _, f := range base {
		fm[f.Name] = &Change{Name: f.Name, BaseCalls: f.Calls, BaseNs: f.SelfNs, BaseErrors: f.Errors, Vanished: true}
	}
	for _, f := range cur {
		c := fm[f.Name]
		if c == nil {
			c = &Change{Name: f.Name, Appeared: true}
			fm[f.Name] = c
		}
		c.Vanished = false
		c.NewCalls, c.NewNs, c.NewErrors = f.Calls, f.SelfNs, f.Errors
	}
	var funcs, errs []Change
	for _, c := range fm {
		funcs = append(funcs, *c)
		if b, a := c.ErrorRate(); a != b {
			errs = append(errs, *c)
		}
	}
	sort.Slice(errs, func(i, j int) bool {
		bi, ai := errs[i].ErrorRate()
		bj, aj := errs[j].ErrorRate()
		if di, dj := math.Abs(ai-bi), math.Abs(aj-bj); di != dj {
			return di > dj
		}
		return errs[i].Name < errs[j].Name
	})
	if top > 0 && len(errs) > top {
		errs = errs[:top]
	}
	for i := range errs {
		errs[i].DeltaNs = errs[i].NewNs - errs[i].BaseNs
	}
	if errs == nil {
		errs = []Change{}
	}
	return Diff{Functions: largest(funcs, top), Chains: largest(explained(chains), top), Errors: errs}
}

// explained leaves out each chain whose change in time is its callee's:
// a chain one step longer that changed by the same, within 1%, and the
// same way. A chain's time holds its callees', so a change deep down
// changes every chain above it alike: the one that changed is the
// deepest.
func explained(cs []Change) []Change {
	delta := func(c Change) int64 { return c.NewNs - c.BaseNs }
	byKey := map[string]int{}
	for i, c := range cs {
		byKey[Key(c.Chain)] = i
	}
	drop := make([]bool, len(cs))
	for _, c := range cs {
		d := delta(c)
		if len(c.Chain) < 2 || d == 0 {
			continue
		}
		p, ok := byKey[Key(c.Chain[:len(c.Chain)-1])]
		if !ok {
			continue
		}
		pd := delta(cs[p])
		if pd != 0 && (pd > 0) == (d > 0) && math.Abs(float64(pd-d)) <= 0.01*math.Abs(float64(pd)) {
			drop[p] = true
		}
	}
	out := cs[:0:0]
	for i, c := range cs {
		if !drop[i] {
			out = append(out, c)
		}
	}
	return out
}

// largest orders changes by size, largest first, and keeps top of them
// (0: all).
func largest(cs []Change, top int) []Change {
	for i := range cs {
		cs[i].DeltaNs = cs[i].NewNs - cs[i].BaseNs
	}
	abs := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	key := func(c Change) string {
		if c.Name != "" {
			return c.Name
		}
		return Key(c.Chain)
	}
	sort.Slice(cs, func(i, j int) bool {
		if a, b := abs(cs[i].DeltaNs), abs(cs[j].DeltaNs); a != b {
			return a > b
		}
		return key(cs[i]) < key(cs[j])
	})
	if top > 0 && len(cs) > top {
		cs = cs[:top]
	}
	if cs == nil {
		cs = []Change{}
	}
	return cs
}
