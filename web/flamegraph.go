package web

import (
	"encoding/json"
	"net/http"

	"github.com/calltrail/calltrail/query"
)

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
	js, err := json.Marshal(s.t.Flame(base, inverted, w))
	if err != nil {
		return nil, err
	}
	s.flames[key] = js
	return js, nil
}
