package web

import (
	"encoding/json"
	"net/http"

	"github.com/calltrail/calltrail/analysis"
)

// flameJSON is the calling-context tree, flattened in pre-order: node i
// has parent Parent[i] (-1 for the outermost calls) and function Func[i].
// The page builds the graphs from it: by total time, by self time
// inverted, by CPU or waiting time, and against the base trace.
type flameJSON struct {
	Parent    []int32  `json:"parent"`
	Func      []uint32 `json:"func"`
	Calls     []uint64 `json:"calls"`
	Total     []int64  `json:"total"`
	Self      []int64  `json:"self"`
	CPU       []int64  `json:"cpu,omitempty"`
	Wait      []int64  `json:"wait,omitempty"`
	BaseTotal []int64  `json:"baseTotal,omitempty"`
	BaseSelf  []int64  `json:"baseSelf,omitempty"`
	// Names of the base trace's chains missing from this one, with
	// their time, so that what vanished still shows in the totals.
	Gone []goneJSON `json:"gone,omitempty"`
}

type goneJSON struct {
	Path  []string `json:"path"`
	Total int64    `json:"total"`
	Self  int64    `json:"self"`
}

// minShare is the smallest part of the program's time a chain must have
// to be sent: a thinner box is not drawn at any zoom the page offers.
const minShare = 1e-7

func (s *Server) flameGraph(_ http.ResponseWriter, _ *http.Request, _ *params) (any, error) {
	s.flameOnce.Do(func() { s.flame, s.flameErr = json.Marshal(s.buildFlame()) })
	return s.flame, s.flameErr
}

func (s *Server) buildFlame() *flameJSON {
	p := s.t.Profile
	var all int64
	for _, c := range p.Root.Children {
		all += c.Total
	}
	cut := int64(float64(all) * minShare)
	f := &flameJSON{}
	// The base trace's chains are matched by their functions' names (ids
	// differ between traces), walking both trees at once.
	var bp *analysis.Profile
	if s.base != nil {
		bp = s.base.Profile
	}
	seen := map[*analysis.Node]bool{}
	var walk func(n *analysis.Node, parent int32, b *analysis.Node)
	walk = func(n *analysis.Node, parent int32, b *analysis.Node) {
		if n.Calls == 0 || n.Total < cut && n.Self < cut {
			return
		}
		i := int32(len(f.Func))
		f.Parent = append(f.Parent, parent)
		f.Func = append(f.Func, n.Func)
		f.Calls = append(f.Calls, n.Calls)
		f.Total = append(f.Total, n.Total)
		f.Self = append(f.Self, n.Self)
		if p.HasCPU || p.HasWaits {
			f.CPU = append(f.CPU, n.CPU)
			f.Wait = append(f.Wait, n.Wait)
		}
		if bp != nil {
			var bt, bs int64
			if b != nil {
				bt, bs = b.Total, b.Self
				seen[b] = true
			}
			f.BaseTotal = append(f.BaseTotal, bt)
			f.BaseSelf = append(f.BaseSelf, bs)
		}
		var byName map[string]*analysis.Node
		if b != nil && len(n.Children) > 0 {
			byName = childrenByName(b, bp)
		}
		for _, c := range n.Children {
			walk(c, i, byName[p.Names(c.Func)])
		}
	}
	var top map[string]*analysis.Node
	if bp != nil {
		top = childrenByName(bp.Root, bp)
	}
	for _, c := range p.Root.Children {
		walk(c, -1, top[p.Names(c.Func)])
	}
	if bp != nil {
		f.Gone = gone(bp, seen, cut)
	}
	return f
}

func childrenByName(n *analysis.Node, p *analysis.Profile) map[string]*analysis.Node {
	m := make(map[string]*analysis.Node, len(n.Children))
	for _, c := range n.Children {
		m[p.Names(c.Func)] = c
	}
	return m
}

// gone lists the chains of the base trace with no match in the trace,
// those that took at least cut.
func gone(bp *analysis.Profile, seen map[*analysis.Node]bool, cut int64) []goneJSON {
	var out []goneJSON
	var path []string
	var walk func(b *analysis.Node)
	walk = func(b *analysis.Node) {
		path = append(path, bp.Names(b.Func))
		if !seen[b] && b.Calls > 0 && (b.Total >= cut || b.Self >= cut) {
			out = append(out, goneJSON{append([]string(nil), path...), b.Total, b.Self})
		}
		for _, c := range b.Children {
			walk(c)
		}
		path = path[:len(path)-1]
	}
	for _, c := range bp.Root.Children {
		walk(c)
	}
	return out
}
