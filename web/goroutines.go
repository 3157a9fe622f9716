package web

import "github.com/calltrail/calltrail/analysis"

// goroutinesJSON is the overview's account of the goroutines: how many,
// alive when, for how long, doing how much, started by which chains.
type goroutinesJSON struct {
	Count     int           `json:"count"`
	MaxLive   int           `json:"maxLive"`
	Slice     int64         `json:"slice"` // nanoseconds each of Live covers
	Live      []int         `json:"live"`
	Lifetime  [3]int64      `json:"lifetime"` // p50, p90, max
	Work      [3]int64      `json:"work"`
	StartedBy []spawnerJSON `json:"startedBy"`
}

type spawnerJSON struct {
	Chain      []string `json:"chain"`
	Goroutines uint64   `json:"goroutines"`
	Calls      uint64   `json:"calls"`
}

// liveSlices is how many bars the chart of live goroutines has.
const liveSlices = 120

func goroutineSummary(p *analysis.Profile) *goroutinesJSON {
	g := p.GoroutineSummary(liveSlices)
	out := &goroutinesJSON{
		Count: g.Count, MaxLive: g.MaxLive, Slice: int64(g.Slice), Live: g.Live,
		Lifetime:  [3]int64{int64(g.Lifetime.P50), int64(g.Lifetime.P90), int64(g.Lifetime.Max)},
		Work:      [3]int64{int64(g.Work.P50), int64(g.Work.P90), int64(g.Work.Max)},
		StartedBy: []spawnerJSON{},
	}
	for _, s := range g.Spawners {
		if len(out.StartedBy) == 5 {
			break
		}
		if s.Node.Parent == nil {
			continue // started before any traced call
		}
		var chain []string
		for _, id := range s.Node.Path() {
			chain = append(chain, p.Names(id))
		}
		out.StartedBy = append(out.StartedBy, spawnerJSON{chain, s.Goroutines, s.Node.Calls})
	}
	return out
}
