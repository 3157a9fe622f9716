package analysis

import (
	"math/rand/v2"
	"testing"
)

// TestSharesOf counts calls by goroutine through Shares.of and through a
// map, goroutines of dense ids and scattered ones, in runs and not, more
// of them than MaxShares: the first MaxShares keep their own counts, in
// the order they came, and the rest add up in Others.
func TestSharesOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   func(r *rand.Rand) uint64
	}{
		{"dense", func(r *rand.Rand) uint64 { return 1 + r.Uint64N(3000) }},
		{"scattered", func(r *rand.Rand) uint64 { return r.Uint64() }},
		{"few", func(r *rand.Rand) uint64 { return 1 + r.Uint64N(40) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var s Shares
			want := map[uint64]uint64{}
			var order []uint64
			var others uint64
			for range 200_000 {
				g := tc.id(r)
				for range 1 + r.IntN(3) { // sometimes a run
					s.of(g).Calls++
					if _, ok := want[g]; !ok && len(order) < MaxShares {
						order = append(order, g)
						want[g] = 0
					}
					if _, ok := want[g]; ok {
						want[g]++
					} else {
						others++
					}
				}
			}
			if len(s.Each) != len(order) {
				t.Fatalf("%d goroutines kept, want %d", len(s.Each), len(order))
			}
			for i, sh := range s.Each {
				if sh.G != order[i] || sh.Calls != want[sh.G] {
					t.Fatalf("Each[%d] = %+v, want goroutine %d with %d calls", i, sh, order[i], want[order[i]])
				}
			}
			if s.Others.Calls != others {
				t.Errorf("Others has %d calls, want %d", s.Others.Calls, others)
			}
		})
	}
}
