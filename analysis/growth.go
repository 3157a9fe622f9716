package analysis

// Growth counts a function's calls, and those that returned an error,
// in spans of the run of equal length: eight of them, each twice as long
// as before whenever the run outgrows them, so that its size is fixed
// however long the run.
type Growth struct {
	Width  int64 // nanoseconds a span covers; 0 before the first call
	Calls  [growthSpans]uint32
	Errors [growthSpans]uint32

	shift uint8  // Width is 1<<shift, once set
	reach uint64 // the end of the last span: 0 before the first call
}

const growthSpans = 8

// add counts a call started at t, nanoseconds since the trace started.
// Width is a power of two, so the span is a shift, not a division.
func (g *Growth) add(t int64, failed bool) {
	i := g.widen(t)
	g.Calls[i] = satAdd(g.Calls[i], 1)
	if failed {
		g.Errors[i] = satAdd(g.Errors[i], 1)
	}
}

// tryAdd is add for a call that did not fail, when the spans reach t,
// and reports whether they did: small enough to be inlined in the loop
// over every call, where add is not.
func (g *Growth) tryAdd(t int64) bool {
	u := uint64(max(t, 0))
	if u >= g.reach {
		return false
	}
	c := &g.Calls[u>>g.shift&(growthSpans-1)]
	*c = satAdd(*c, 1)
	return true
}

// widen makes the spans wide enough to reach t, if they do not (or
// there are none yet), and returns t's span.
func (g *Growth) widen(t int64) uint64 {
	if g.Width == 0 {
		g.Width, g.shift = 1<<10, 10 // a microsecond: doubled as the run goes on
	}
	u := uint64(max(t, 0))
	for u>>g.shift >= growthSpans {
		for i := range growthSpans / 2 {
			g.Calls[i] = g.Calls[2*i] + g.Calls[2*i+1]
			g.Errors[i] = g.Errors[2*i] + g.Errors[2*i+1]
		}
		for i := growthSpans / 2; i < growthSpans; i++ {
			g.Calls[i], g.Errors[i] = 0, 0
		}
		g.Width *= 2
		g.shift++
	}
	g.reach = growthSpans << g.shift
	return u >> g.shift
}

func satAdd(a, b uint32) uint32 {
	if a+b < a {
		return ^uint32(0)
	}
	return a + b
}

// Halves returns the calls and errors of the first and second halves of
// the time up to end, nanoseconds since the trace started, as the spans
// divide it: a span across the middle counts in the first half.
func (g *Growth) Halves(end int64) (calls, errors [2]uint64) {
	if g.Width == 0 {
		return
	}
	mid := end / 2
	for i := range growthSpans {
		h := 0
		if int64(i)*g.Width >= mid {
			h = 1
		}
		calls[h] += uint64(g.Calls[i])
		errors[h] += uint64(g.Errors[i])
	}
	return
}
