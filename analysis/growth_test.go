package analysis

import (
	"math/rand"
	"testing"
)

// TestGrowth counts calls at random times and checks each span's count
// against the calls whose start falls in it, counted afresh at the end:
// spans double as the run outgrows them, and merging keeps every call.
func TestGrowth(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := range 200 {
		var g Growth
		var starts []int64
		var failed []bool
		scale := int64(1) << rng.Intn(40)
		for range rng.Intn(500) + 1 {
			s := rng.Int63n(scale)
			if rng.Intn(20) == 0 {
				s = -s // a time before the start counts at 0
			}
			f := rng.Intn(3) == 0
			starts, failed = append(starts, max(s, 0)), append(failed, f)
			g.add(s, f)
		}
		var calls, errors [growthSpans]uint32
		for i, s := range starts {
			k := s / g.Width
			if k >= growthSpans {
				t.Fatalf("round %d: start %d past the last span of width %d", round, s, g.Width)
			}
			calls[k]++
			if failed[i] {
				errors[k]++
			}
		}
		if calls != g.Calls || errors != g.Errors {
			t.Fatalf("round %d (width %d): calls %v errors %v, want %v %v", round, g.Width, g.Calls, g.Errors, calls, errors)
		}
	}
}
