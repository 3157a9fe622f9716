package web

import (
	"encoding/json"
	"net/http"

	"github.com/calltrail/calltrail/query"
)

// flameGraph answers /api/flame?mode=total|self&weight=wall|cpu|wait: the
// query layer's flame graph, against the base trace if there is one,
// built once for each mode and weight. With trace-id and span, it is
// the graph of the calls of the requests they select, compared with
// nothing: the base trace's requests are others.
func (s *Server) flameGraph(_ http.ResponseWriter, _ *http.Request, p *params) (any, error) {
	f := p.requests()
	inverted := p.choice("mode", "total", "self") == "self"
	w := query.Weight(p.choice("weight", "wall", "cpu", "wait"))
	if p.err != nil {
		return nil, nil
	}
	a, _, err := s.analysisFor(f)
	if err != nil {
		return nil, err
	}
	if err := a.Weighs(w); err != nil {
		return nil, badRequest(err.Error())
	}
	var base *query.Trace
	if s.base != nil && a == s.all {
		base = s.base.Trace
	}
	return a.flame(base, inverted, w)
}

// flame returns the JSON of a's flame graph, made once for each mode and
// weight.
func (a *analysed) flame(base *query.Trace, inverted bool, w query.Weight) ([]byte, error) {
	key := string(w)
	if inverted {
		key += "/self"
	}
	a.flameMu.Lock()
	defer a.flameMu.Unlock()
	if js, ok := a.flames[key]; ok {
		return js, nil
	}
	if a.flames == nil {
		a.flames = map[string][]byte{}
	}
	js, err := json.Marshal(a.Flame(base, inverted, w))
	if err != nil {
		return nil, err
	}
	a.flames[key] = js
	return js, nil
}
