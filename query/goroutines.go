package query

// Goroutines is how many goroutines ran traced code, alive when, for how
// long, doing how much, and started by which chains.
type Goroutines struct {
	Count    int    `json:"goroutines"`
	MaxAlive int    `json:"max_alive"` // the most alive at one instant
	Lifetime Spread `json:"lifetime"`  // from a goroutine's first traced event to its last
	Work     Spread `json:"work"`      // time in traced calls
	// Alive counts the goroutines alive at some time in each of equal
	// slices of the trace, SliceNs long.
	SliceNs   int64     `json:"slice_ns"`
	Alive     []int     `json:"alive"`
	StartedBy []Spawner `json:"started_by"`
}

// Spread is the median, 90th percentile and largest of some durations.
type Spread struct {
	P50Ns int64 `json:"p50_ns"`
	P90Ns int64 `json:"p90_ns"`
	MaxNs int64 `json:"max_ns"`
}

// Spawner is a chain of calls that started goroutines running traced
// code.
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
	out := Goroutines{
		Count: g.Count, MaxAlive: g.MaxLive, SliceNs: int64(g.Slice), Alive: g.Live,
		Lifetime:  Spread{int64(g.Lifetime.P50), int64(g.Lifetime.P90), int64(g.Lifetime.Max)},
		Work:      Spread{int64(g.Work.P50), int64(g.Work.P90), int64(g.Work.Max)},
		StartedBy: []Spawner{},
	}
	if out.Alive == nil {
		out.Alive = []int{}
	}
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
