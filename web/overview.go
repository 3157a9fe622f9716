package web

import (
	"net/http"
	"sync"
	"time"

	"github.com/calltrail/calltrail/query"
)

// overviewJSON is the query layer's overview, with what only the server
// knows.
type overviewJSON struct {
	query.Overview
	Base     string `json:"base,omitempty"`    // the trace compared with, if any
	Warning  string `json:"warning,omitempty"` // why the trace may be incomplete
	LoadTime int64  `json:"load_ns"`           // to load the trace, or analyse the requests selected
	// Requests counts the trace's OpenTelemetry spans: the Requests
	// view lists them.
	Requests int `json:"requests,omitempty"`
}

const (
	topN       = 15  // functions the overview lists by self and by total time
	liveSlices = 120 // bars of the chart of live goroutines
)

// overview answers /api/overview: of the whole trace or, with trace-id
// and span, of the calls of the requests they select.
func (s *Server) overview(_ http.ResponseWriter, _ *http.Request, p *params) (any, error) {
	f := p.requests()
	if p.err != nil {
		return nil, nil
	}
	a, _, err := s.analysisFor(f)
	if err != nil {
		return nil, err
	}
	o := overviewJSON{Overview: a.overview(), Warning: s.t.Warning, LoadTime: int64(a.took)}
	if a == s.all {
		if s.base != nil {
			o.Base = s.base.Name
		}
		if s.t.req != nil {
			o.Requests = len(s.t.req.index.Spans)
		}
	}
	return o, nil
}

// analysed is an analysis as the views serve it, the whole trace's or
// some requests': its overview and flame graphs made once each.
type analysed struct {
	*query.Trace
	took time.Duration // to analyse

	overviewOnce sync.Once
	ov           query.Overview

	flameMu sync.Mutex
	flames  map[string][]byte // flame graphs' JSON by mode and weight
}

// overview is the query layer's overview, made once.
func (a *analysed) overview() query.Overview {
	a.overviewOnce.Do(func() {
		a.ov = a.Overview(topN, liveSlices)
	})
	return a.ov
}

// funcNames returns every function's name, the index its id: other
// responses name functions by id to stay small.
func (s *Server) funcNames(_ http.ResponseWriter, _ *http.Request, _ *params) (any, error) {
	return s.t.Names(), nil
}
