package web

import (
	"errors"
	"net/http"

	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/tracefile"
)

const maxChains = 200 // chains the function view lists; the rest are counted

// function answers /api/func?name=NAME: the query layer's function view,
// its histogram's bars listing their slowest calls from the timeline
// index; with trace-id and span, of the calls of the requests they
// select.
func (s *Server) function(_ http.ResponseWriter, _ *http.Request, p *params) (any, error) {
	f := p.requests()
	name := p.q.Get("name")
	if p.err != nil {
		return nil, nil
	}
	if name == "" {
		return nil, badRequest("parameter name: want a function name")
	}
	id, err := s.t.Func(name)
	var nf *query.NotFoundError
	if errors.As(err, &nf) {
		// The query layer's words, as the command line says them.
		return nil, notFound(nf.Error())
	}
	a, ix, err := s.analysisFor(f)
	if err != nil {
		return nil, err
	}
	v, ok := a.View(id, maxChains, s.t.callsIn(ix))
	if !ok {
		if a != s.all {
			return nil, notFound("no function " + name + " in the calls of the requests selected")
		}
		return nil, notFound("no function " + name + " in the trace's calls")
	}
	return v, nil
}

// callsIn visits the calls of function id in the timeline index ix.
func (t *Trace) callsIn(ix *index) query.CallSource {
	return func(id uint32, visit func(query.Call)) {
		for _, l := range ix.lanes {
			for i, fn := range l.fn {
				if fn == id {
					visit(query.Call{G: l.g, StartNs: l.start[i], DurationNs: l.dur[i] - l.heldFor(i), Exit: query.ExitName(l.exit[i]), Error: t.callError(l.errAt(i))})
				}
			}
		}
	}
}

// callError is the error of id, nil for 0: a call that returned none.
func (t *Trace) callError(id uint32) *tracefile.Error {
	if id == 0 {
		return nil
	}
	e := t.Profile.Error(id)
	return &e
}
