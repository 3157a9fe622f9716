package web

import (
	"encoding/json"
	"net/http"

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
	js, err := json.Marshal(FlameGraph(s.t.Trace, base, inverted, w))
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
