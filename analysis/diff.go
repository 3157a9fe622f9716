package analysis

import (
	"sort"
	"strings"
)

// Change is how one function, or one chain, changed between two traces.
type Change struct {
	Name      string // function name, or chain as "a -> b -> c"
	BaseCalls uint64
	NewCalls  uint64
	BaseTime  int64 // self time for functions, total time for chains
	NewTime   int64
	Appeared  bool // only in the new trace
	Vanished  bool // only in the base trace
}

// Delta is the change in time.
func (c Change) Delta() int64 { return c.NewTime - c.BaseTime }

// Diff compares two profiles, function by function (self time) and chain
// by chain (total time), the largest changes first. Functions and chains
// are matched by name, as ids differ between traces.
func Diff(base, cur *Profile) (funcs, chains []Change) {
	fm := map[string]*Change{}
	for _, f := range base.Funcs {
		fm[f.Name] = &Change{Name: f.Name, BaseCalls: f.Calls, BaseTime: f.Self, Vanished: true}
	}
	for _, f := range cur.Funcs {
		c := fm[f.Name]
		if c == nil {
			c = &Change{Name: f.Name, Appeared: true}
			fm[f.Name] = c
		}
		c.Vanished = false
		c.NewCalls, c.NewTime = f.Calls, f.Self
	}
	cm := map[string]*Change{}
	base.Walk(func(n *Node) {
		if n.Calls > 0 {
			k := chainName(base, n)
			cm[k] = &Change{Name: k, BaseCalls: n.Calls, BaseTime: n.Total, Vanished: true}
		}
	})
	cur.Walk(func(n *Node) {
		if n.Calls == 0 {
			return
		}
		k := chainName(cur, n)
		c := cm[k]
		if c == nil {
			c = &Change{Name: k, Appeared: true}
			cm[k] = c
		}
		c.Vanished = false
		c.NewCalls, c.NewTime = n.Calls, n.Total
	})
	return sorted(fm), sorted(cm)
}

func chainName(p *Profile, n *Node) string {
	var names []string
	for _, id := range n.Path() {
		names = append(names, p.Names(id))
	}
	return strings.Join(names, " -> ")
}

func sorted(m map[string]*Change) []Change {
	out := make([]Change, 0, len(m))
	for _, c := range m {
		out = append(out, *c)
	}
	abs := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := abs(out[i].Delta()), abs(out[j].Delta()); a != b {
			return a > b
		}
		return out[i].Name < out[j].Name
	})
	return out
}
