package web

import (
	"net/http"
	"path/filepath"
	"strings"

	"github.com/calltrail/calltrail/diagnose"
)

// funcRow is a function's figures in a table.
type funcRow struct {
	Name  string `json:"name"`
	Calls uint64 `json:"calls"`
	Total int64  `json:"total"`
	Self  int64  `json:"self"`
	Max   int64  `json:"max"`
	CPU   int64  `json:"cpu,omitempty"`
	Wait  int64  `json:"wait,omitempty"`
}

type overviewJSON struct {
	File       string             `json:"file"`
	Base       string             `json:"base,omitempty"`
	Name       string             `json:"name"` // a short name for the program
	Program    string             `json:"program"`
	Go         string             `json:"go"`
	Duration   int64              `json:"duration"`
	Goroutines int                `json:"goroutines"`
	Calls      int                `json:"calls"`
	Dropped    uint64             `json:"dropped"`
	Policy     string             `json:"full,omitempty"` // CALLTRAIL_FULL: wait or drop; empty in older traces
	Held       uint64             `json:"held"`           // nanoseconds goroutines waited for the trace writer, summed
	Waits      uint64             `json:"waits"`          // how many times they waited
	Functions  int                `json:"functions"`
	HasCPU     bool               `json:"hasCPU"`
	HasWaits   bool               `json:"hasWaits"`
	Warning    string             `json:"warning,omitempty"`
	Findings   []diagnose.Finding `json:"findings"`
	TopSelf    []funcRow          `json:"topSelf"`
	TopTotal   []funcRow          `json:"topTotal"`
	Goroutine  *goroutinesJSON    `json:"goroutineSummary"`
	LoadMillis int64              `json:"loadMillis"`
}

// topN is how many functions the overview lists by self and by total.
const topN = 15

func (s *Server) overview(_ http.ResponseWriter, _ *http.Request, _ *params) (any, error) {
	t, p := s.t, s.t.Profile
	o := overviewJSON{
		File:       t.Name,
		Name:       t.programName(),
		Program:    strings.TrimSpace(p.Meta["path"] + " " + p.Meta["args"]),
		Go:         strings.TrimSpace(p.Meta["go"] + " " + p.Meta["goos"] + "/" + p.Meta["goarch"]),
		Duration:   int64(p.Duration),
		Goroutines: p.Goroutines,
		Calls:      t.Calls(),
		Dropped:    p.Stats.DroppedCalls,
		Policy:     p.Meta["full"],
		Held:       p.Stats.HeldNs,
		Waits:      p.Stats.Waits,
		Functions:  len(p.Funcs),
		HasCPU:     p.HasCPU,
		HasWaits:   p.HasWaits,
		Warning:    t.Warning,
		Findings:   t.Findings,
		LoadMillis: t.LoadTime.Milliseconds(),
		Goroutine:  s.goroutines(),
	}
	if o.Findings == nil {
		o.Findings = []diagnose.Finding{}
	}
	if s.base != nil {
		o.Base = s.base.Name
	}
	for _, key := range []string{"self", "total"} {
		var rows []funcRow
		for _, f := range p.Sorted(key) {
			if len(rows) == topN {
				break
			}
			rows = append(rows, funcRow{f.Name, f.Calls, f.Total, f.Self, f.Max, f.CPU, f.Wait})
		}
		if rows == nil {
			rows = []funcRow{}
		}
		if key == "self" {
			o.TopSelf = rows
		} else {
			o.TopTotal = rows
		}
	}
	return o, nil
}

// programName names the program: its executable's name, or, for one
// that calltrail run built into a temporary "program", the directory of
// its main.main's source file.
func (t *Trace) programName() string {
	m := t.Profile.Meta
	name := m["program"]
	if name == "" && m["path"] != "" {
		name = filepath.Base(m["path"])
	}
	if id, ok := t.byName["main.main"]; ok && name == "program" {
		file := t.files[id] // "file:line"; a Windows path has a colon too
		file = file[:max(strings.LastIndexByte(file, ':'), 0)]
		if dir := filepath.Base(filepath.Dir(file)); dir != "." && dir != string(filepath.Separator) {
			name = dir
		}
	}
	return strings.TrimSpace(name + " " + m["args"])
}

// funcNames returns every function's name, the index its id: other
// responses name functions by id to stay small.
func (s *Server) funcNames(_ http.ResponseWriter, _ *http.Request, _ *params) (any, error) {
	return s.t.names, nil
}
