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

// TestGrowthTryAdd counts calls at random times, some failed, through
// tryAdd where it takes them (as Analyze does) and through add alone: the
// spans come out the same.
func TestGrowthTryAdd(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for range 100 {
		var fast, slow Growth
		end := int64(1) << r.Intn(40)
		for range r.Intn(2000) {
			at := r.Int63n(end) - 5 // a few before the start
			failed := r.Intn(10) == 0
			if failed || !fast.tryAdd(at) {
				fast.add(at, failed)
			}
			slow.add(at, failed)
		}
		if fast.Width != slow.Width || fast.Calls != slow.Calls || fast.Errors != slow.Errors {
			t.Fatalf("through tryAdd %+v, add alone %+v", fast, slow)
		}
	}
}
