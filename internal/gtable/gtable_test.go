package gtable

import (
	"math/rand/v2"
	"testing"
)

// TestAgainstMap applies the same random operations to a Table and a
// map, on dense ids, sparse ones and both, and checks they agree; and
// that sparse ids never make pages that hold too few values.
func TestAgainstMap(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   func(r *rand.Rand) uint64
	}{
		{"dense", func(r *rand.Rand) uint64 { return r.Uint64N(5000) }},
		{"sparse", func(r *rand.Rand) uint64 { return r.Uint64() }},
		{"mixed", func(r *rand.Rand) uint64 {
			if r.IntN(4) == 0 {
				return r.Uint64()
			}
			return 1<<40 + r.Uint64N(3000)
		}},
		{"strided", func(r *rand.Rand) uint64 { return r.Uint64N(5000) * pageSize }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var tb Table[int]
			m := map[uint64]int{}
			most := 0 // the most values held: pages stay when values go
			for step := range 100_000 {
				id := tc.id(r)
				switch r.IntN(4) {
				case 0, 1:
					v, added := tb.Put(id)
					_, had := m[id]
					if added == had {
						t.Fatalf("step %d: Put(%d) added %v, map had it %v", step, id, added, had)
					}
					*v += step
					m[id] += step
				case 2:
					tb.Delete(id)
					delete(m, id)
				case 3:
					v := tb.Get(id)
					want, ok := m[id]
					if (v != nil) != ok || ok && *v != want {
						t.Fatalf("step %d: Get(%d) = %v, map has %d, %v", step, id, v, want, ok)
					}
				}
				most = max(most, len(m))
				if tb.Len() != len(m) {
					t.Fatalf("step %d: Len %d, map %d", step, tb.Len(), len(m))
				}
			}
			seen := 0
			tb.Range(func(id uint64, v *int) bool {
				if want, ok := m[id]; !ok || *v != want {
					t.Errorf("Range gave %d = %d, map has %d, %v", id, *v, want, ok)
				}
				seen++
				return true
			})
			if seen != len(m) {
				t.Errorf("Range gave %d ids, map has %d", seen, len(m))
			}
			if limit := freePages + most/minFill + 1; len(tb.pages) > limit {
				t.Errorf("%d pages for at most %d values; want at most %d", len(tb.pages), most, limit)
			}
		})
	}
}

// TestSparseIds: ids pages apart make a page for at most one in minFill
// of them, past the first few, so that a Table of them holds at most
// about twice its values.
func TestSparseIds(t *testing.T) {
	var tb Table[[16]int64]
	for i := range uint64(10_000) {
		tb.Put(i * pageSize * 3)
	}
	if limit := freePages + 10_000/minFill + 1; len(tb.pages) > limit {
		t.Errorf("%d pages for 10,000 ids pages apart; want at most %d", len(tb.pages), limit)
	}
	var dense Table[int64]
	for i := range uint64(100_000) {
		dense.Put(1000 + i)
	}
	if len(dense.sparse) != 0 || len(dense.pages) > 100_000/pageSize+2 {
		t.Errorf("dense ids: %d pages and %d apart", len(dense.pages), len(dense.sparse))
	}
}

func BenchmarkPutDense(b *testing.B) {
	var tb Table[[4]int64]
	for i := range b.N {
		v, _ := tb.Put(uint64(i))
		v[0]++
	}
}

func BenchmarkMapDense(b *testing.B) {
	m := map[uint64][4]int64{}
	for i := range b.N {
		v := m[uint64(i)]
		v[0]++
		m[uint64(i)] = v
	}
}
