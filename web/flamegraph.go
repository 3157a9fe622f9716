package web

import (
	"encoding/json"
	"net/http"
	"strings"

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
	var baseNodes map[string]*analysis.Node
	if s.base != nil {
		baseNodes = chainsByName(s.base.Profile)
	}
	f := &flameJSON{}
	seen := map[string]bool{}
	var walk func(n *analysis.Node, parent int32, path string)
	walk = func(n *analysis.Node, parent int32, path string) {
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
		if baseNodes != nil {
			path += ";" + p.Names(n.Func)
			var bt, bs int64
			if b := baseNodes[path]; b != nil {
				bt, bs = b.Total, b.Self
				seen[path] = true
			}
			f.BaseTotal = append(f.BaseTotal, bt)
			f.BaseSelf = append(f.BaseSelf, bs)
		}
		for _, c := range n.Children {
			walk(c, i, path)
		}
	}
	for _, c := range p.Root.Children {
		walk(c, -1, "")
	}
	for path, b := range baseNodes {
		if !seen[path] && b.Calls > 0 && (b.Total >= cut || b.Self >= cut) {
			f.Gone = append(f.Gone, goneJSON{strings.Split(path[1:], ";"), b.Total, b.Self})
		}
	}
	return f
}

// chainsByName indexes a profile's chains by their functions' names, the
// way two traces of one program are matched (ids differ between traces).
func chainsByName(p *analysis.Profile) map[string]*analysis.Node {
	m := map[string]*analysis.Node{}
	var walk func(n *analysis.Node, path string)
	walk = func(n *analysis.Node, path string) {
		path += ";" + p.Names(n.Func)
		m[path] = n
		for _, c := range n.Children {
			walk(c, path)
		}
	}
	for _, c := range p.Root.Children {
		walk(c, "")
	}
	return m
}
