package analysis

import "math/bits"

// Growth counts a function's calls, and those that returned an error,
// in spans of the run of equal length: eight of them, each twice as long
// as before whenever the run outgrows them, so that its size is fixed
// however long the run.
type Growth struct {
	Width  int64 // nanoseconds a span covers; 0 before the first call
	Calls  [growthSpans]uint32
	Errors [growthSpans]uint32
}

const growthSpans = 8

// add counts a call started at t, nanoseconds since the trace started.
// Width is a power of two, so the span is a shift, not a division: add
// runs for every call, and a division costs more than the rest of it.
func (g *Growth) add(t int64, failed bool) {
	if g.Width == 0 {
		g.Width = 1 << 10 // a microsecond: doubled as the run goes on
	}
	t = max(t, 0)
	shift := uint(bits.TrailingZeros64(uint64(g.Width)))
	for t>>shift >= growthSpans {
		for i := range growthSpans / 2 {
			g.Calls[i] = g.Calls[2*i] + g.Calls[2*i+1]
			g.Errors[i] = g.Errors[2*i] + g.Errors[2*i+1]
		}
		for i := growthSpans / 2; i < growthSpans; i++ {
			g.Calls[i], g.Errors[i] = 0, 0
		}
		g.Width *= 2
		shift++
	}
	i := t >> shift
	g.Calls[i] = satAdd(g.Calls[i], 1)
	if failed {
		g.Errors[i] = satAdd(g.Errors[i], 1)
	}
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
