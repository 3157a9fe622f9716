package web

import (
	"net/http"

	"github.com/calltrail/calltrail/query"
)

// overviewJSON is the query layer's overview, with what only the server
// knows.
type overviewJSON struct {
	query.Overview
	Base     string `json:"base,omitempty"`    // the trace compared with, if any
	Warning  string `json:"warning,omitempty"` // why the trace may be incomplete
	LoadTime int64  `json:"load_ns"`
}

const (
	topN       = 15  // functions the overview lists by self and by total time
	liveSlices = 120 // bars of the chart of live goroutines
)

func (s *Server) overview(_ http.ResponseWriter, _ *http.Request, _ *params) (any, error) {
	ov := s.overviewData() // before the errors it counts once
	o := overviewJSON{Overview: ov, Warning: s.t.Warning, LoadTime: int64(s.t.LoadTime)}
	if s.base != nil {
		o.Base = s.base.Name
	}
	return o, nil
}

// overviewData is the query layer's overview, made once.
func (s *Server) overviewData() query.Overview {
	s.overviewOnce.Do(func() {
		s.ov = s.t.Overview(topN, liveSlices)
	})
	return s.ov
}

// funcNames returns every function's name, the index its id: other
// responses name functions by id to stay small.
func (s *Server) funcNames(_ http.ResponseWriter, _ *http.Request, _ *params) (any, error) {
	return s.t.Names(), nil
}
