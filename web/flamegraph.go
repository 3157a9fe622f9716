package web

import (
	"encoding/json"
	"net/http"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/query"
)

// minShare is the smallest part of the program's time a box must have to
// be sent: a thinner box is not drawn at any zoom the page offers.
const minShare = 1e-7

// flameGraph answers /api/flame?mode=total|self&weight=wall|cpu|wait: the
// query layer's flame graph, against the base trace if there is one,
// built once for each mode and weight.
func (s *Server) flameGraph(_ http.ResponseWriter, _ *http.Request, p *params) (any, error) {
	inverted := p.choice("mode", "total", "self") == "self"
	w := query.Weight(p.choice("weight", "wall", "cpu", "wait"))
	if p.err != nil {
		return nil, nil
	}
	key := string(w)
	if inverted {
		key += "/self"
	}
	s.flameMu.Lock()
	defer s.flameMu.Unlock()
	if js, ok := s.flames[key]; ok {
		return js, nil
	}
	if s.flames == nil {
		s.flames = map[string][]byte{}
	}
	var base *query.Trace
	if s.base != nil {
		base = s.base.Trace
	}
	js, err := json.Marshal(flameData(s.t.Trace, base, inverted, w))
	if err != nil {
		return nil, err
	}
	s.flames[key] = js
	return js, nil
}

// FlameGraph is the flame graph of t the page draws: by total time, or by
// self time inverted; of wall time, or its time on or off CPU; against
// base when it is not nil (by wall time only: samples do not compare
// across runs); boxes too thin to draw left out.
func FlameGraph(t, base *query.Trace, inverted bool, w query.Weight) *query.Tree {
	g := query.FlameGraph(t.Profile, inverted, w)
	cut := int64(float64(g.Value[0]) * minShare)
	if base != nil && w == query.Wall {
		g.Diff(query.FlameGraph(base.Profile, inverted, w), cut)
	}
	return g.Prune(cut)
}

// flameJSON is a flame graph as the page draws it: the query layer's
// tree, and how many of each box's calls returned an error, for the page
// to colour boxes by the share that failed.
type flameJSON struct {
	*query.Tree
	// Errors counts, by box, the calls it stands for that returned an
	// error; nil for a trace without errors. In the inverted graph a box
	// stands for the calls of the function at the root below it, reached
	// through the box's chain of callers: ErrorCalls counts them, as
	// the tree's Calls does only at the root.
	Errors     []uint64 `json:"errors,omitempty"`
	ErrorCalls []uint64 `json:"error_calls,omitempty"`
}

// flameData is FlameGraph with its boxes' errors.
func flameData(t, base *query.Trace, inverted bool, w query.Weight) flameJSON {
	g := flameJSON{Tree: FlameGraph(t, base, inverted, w)}
	if errorCount(t) > 0 {
		g.Errors, g.ErrorCalls = flameErrors(t.Profile, g.Tree, inverted, w)
	}
	return g
}

// flameErrors counts the errors of the calls each box of g, a flame graph
// of profile p, stands for, and, for the inverted graph, those calls. It
// finds the boxes as the query layer built them, by the names along each
// chain of p, and leaves out what pruning left out of g.
func flameErrors(p *analysis.Profile, g *query.Tree, inverted bool, w query.Weight) (errs, calls []uint64) {
	type key struct{ parent, name int32 }
	box := make(map[key]int32, g.Len())
	for i := 1; i < g.Len(); i++ {
		box[key{g.Parent[i], g.Name[i]}] = int32(i)
	}
	nameIndex := make(map[string]int32, len(g.Names))
	for i, n := range g.Names {
		nameIndex[n] = int32(i)
	}
	child := func(k int32, fn uint32) (int32, bool) {
		nm, ok := nameIndex[p.Name(fn)]
		if !ok {
			return 0, false
		}
		c, ok := box[key{k, nm}]
		return c, ok
	}
	errs = make([]uint64, g.Len())
	if !inverted {
		type frame struct {
			n *analysis.Node
			k int32
		}
		for stack := []frame{{p.Root, 0}}; len(stack) > 0; {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, c := range f.n.Children {
				if k, ok := child(f.k, c.Func); ok {
					errs[k] += c.Errors
					stack = append(stack, frame{c, k})
				}
			}
		}
		return errs, nil
	}
	calls = make([]uint64, g.Len())
	p.Walk(func(n *analysis.Node) {
		if selfWeight(n, w) <= 0 {
			return // no box stands for its calls
		}
		k := int32(0)
		for a, d := n, 0; a.Parent != nil && d < query.InvertedDepth; a, d = a.Parent, d+1 {
			var ok bool
			if k, ok = child(k, a.Func); !ok {
				return
			}
			errs[k] += n.Errors
			calls[k] += n.Calls
		}
	})
	return errs, calls
}

// selfWeight is the part of n's weight not in its traced callees: what
// puts n's calls in the inverted flame graph, as the query layer counts
// it.
func selfWeight(n *analysis.Node, w query.Weight) int64 {
	of := func(n *analysis.Node) int64 {
		switch w {
		case query.OnCPU:
			return n.CPU
		case query.OffCPU:
			return n.Wait
		}
		return n.Total
	}
	if w == query.Wall {
		return n.Self
	}
	v := of(n)
	for _, c := range n.Children {
		v -= of(c)
	}
	return v
}
