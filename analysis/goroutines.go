package analysis

import (
	"sort"
	"time"
)

// Goroutines summarises how many goroutines a trace's program ran, for
// how long, doing how much, and where they were started.
type Goroutines struct {
	Count   int `json:"goroutines"`
	MaxLive int `json:"max_alive"` // the most alive at one instant
	// Lifetime and Work are quantiles of the goroutines' spans from
	// first to last traced event, and of their time in traced calls.
	Lifetime Spread `json:"lifetime"`
	Work     Spread `json:"work"`
	// Live counts the goroutines alive at some time in each of equal
	// slices of the trace's duration, Slice long, from From: the start
	// of tracing, or a flight recorder's snapshot's window.
	From  time.Duration `json:"from_ns,omitempty"`
	Slice time.Duration `json:"slice_ns"`
	Live  []int         `json:"alive"`
	// Spawners are the chains that started goroutines running traced
	// code, most goroutines first.
	Spawners []Spawner `json:"-"`
}

// Spread is the median, 90th percentile and largest of some durations.
type Spread struct {
	P50 time.Duration `json:"p50_ns"`
	P90 time.Duration `json:"p90_ns"`
	Max time.Duration `json:"max_ns"`
}

// Spawner is a chain of calls that started goroutines.
type Spawner struct {
	Node       *Node  // the chain in the parent goroutine
	Goroutines uint64 // goroutines it started
}

// PerCall is the mean number of goroutines started by one call of the
// chain.
func (s Spawner) PerCall() float64 {
	return float64(s.Goroutines) / float64(max(s.Node.Calls, 1))
}

// GoroutineSummary summarises p's goroutines, counting those alive over
// time in slices slices of the trace.
func (p *Profile) GoroutineSummary(slices int) *Goroutines {
	g := &Goroutines{Count: len(p.Lifetimes), Lifetime: spread(p.Lifetimes), Work: spread(p.Work), Live: []int{}}
	var origin int64
	if p.Meta.Snapshot() {
		// Its calls count from its window's start.
		origin = min(int64(p.Meta.Window.Start), int64(p.Duration))
	}
	g.From = time.Duration(origin)
	dur := int64(p.Duration) - origin
	if slices > 0 && dur > 0 {
		// Live counts come from the changes at each slice: +1 where a
		// goroutine starts, -1 after the slice it ends in.
		step := (dur + int64(slices) - 1) / int64(slices)
		delta := make([]int, slices+1)
		// A time out of the trace (a damaged or odd one) counts at its
		// edge, never past it.
		at := func(t int64) int64 { return min(max(t-origin, 0)/step, int64(slices-1)) }
		for i, start := range p.Starts {
			first := at(start)
			last := max(at(start+p.Lifetimes[i]), first)
			delta[first]++
			delta[last+1]--
		}
		g.Slice, g.Live = time.Duration(step), make([]int, slices)
		live := 0
		for i := range g.Live {
			live += delta[i]
			g.Live[i] = live
		}
	}
	g.MaxLive = p.maxLive()
	from := p.spawns
	if from == nil {
		from = map[*Node]uint64{}
		p.Walk(func(n *Node) {
			for parent, c := range n.SpawnedFrom {
				from[parent] += c
			}
		})
	}
	for n, c := range from {
		g.Spawners = append(g.Spawners, Spawner{Node: n, Goroutines: c})
	}
	sort.Slice(g.Spawners, func(i, j int) bool {
		a, b := g.Spawners[i], g.Spawners[j]
		if a.Goroutines != b.Goroutines {
			return a.Goroutines > b.Goroutines
		}
		return pathLess(a.Node.Path(), b.Node.Path(), p.Name)
	})
	return g
}

// maxLive is the most goroutines alive at one instant: a sweep over
// their starts and ends in time order, a start first where one goroutine
// ends as another starts.
func (p *Profile) maxLive() int {
	type edge struct {
		t     int64
		delta int
	}
	edges := make([]edge, 0, 2*len(p.Starts))
	for i, s := range p.Starts {
		edges = append(edges, edge{s, 1}, edge{s + p.Lifetimes[i], -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].t != edges[j].t {
			return edges[i].t < edges[j].t
		}
		return edges[i].delta > edges[j].delta
	})
	live, most := 0, 0
	for _, e := range edges {
		live += e.delta
		most = max(most, live)
	}
	return most
}

func spread(ns []int64) Spread {
	if len(ns) == 0 {
		return Spread{}
	}
	s := append([]int64(nil), ns...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(q float64) time.Duration { return time.Duration(s[int(q*float64(len(s)-1))]) }
	return Spread{P50: at(0.5), P90: at(0.9), Max: time.Duration(s[len(s)-1])}
}
