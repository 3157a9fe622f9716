package query

import "github.com/calltrail/calltrail/analysis"

// Goroutines is how many goroutines ran traced code, alive when, for how
// long, doing how much (the analysis's figures), and started by which
// chains, named.
type Goroutines struct {
	analysis.Goroutines
	StartedBy []Spawner `json:"started_by"`
}

// Spawner is a chain of calls that started goroutines running traced
// code: analysis.Spawner with its chain named.
type Spawner struct {
	Chain      []Step  `json:"chain"`
	Goroutines uint64  `json:"goroutines"`
	Calls      uint64  `json:"calls"`    // calls of the chain
	PerCall    float64 `json:"per_call"` // goroutines started per call
}

// Goroutines summarises the trace's goroutines, counting those alive in
// each of slices slices of the trace, and listing at most top chains
// that started them (0: all).
func (t *Trace) Goroutines(slices, top int) Goroutines {
	g := t.Profile.GoroutineSummary(slices)
	out := Goroutines{Goroutines: *g, StartedBy: []Spawner{}}
	for _, s := range g.Spawners {
		if s.Node.Parent == nil {
			continue // started before any traced call
		}
		if top > 0 && len(out.StartedBy) == top {
			break
		}
		out.StartedBy = append(out.StartedBy, Spawner{t.Steps(s.Node), s.Goroutines, s.Node.Calls, s.PerCall()})
	}
	return out
}
