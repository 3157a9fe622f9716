package analysis

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
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

// TestByGoroutine splits chains' calls by goroutine: a chain run by one
// goroutine, and one run by three, the first to end a call first.
func TestByGoroutine(t *testing.T) {
	p := Analyze(build(t, `
1 +main 0
1 +A 10
1 - 30
2 +w 40
2 +A 41
2 - 51
3 +w 60
3 +A 61
3 - 66
2 +A 70
2 - 71
3 - 80
2 - 90
4 +w 95
4 +A 96
4 - 97
4 - 98
1 - 100
`), Options{ByGoroutine: true})
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	p.WalkPaths(func(path []*Node) {
		n := path[len(path)-1]
		var names []string
		for _, c := range path {
			names = append(names, p.Name(c.Func))
		}
		s := ""
		for _, e := range n.ByGoroutine.Each {
			s += fmt.Sprintf("g%d:%d/%d ", e.G, e.Calls, e.Self)
		}
		got[strings.Join(names, ">")] = strings.TrimSpace(s)
	})
	want := map[string]string{
		"main":   "g1:1/80",
		"main>A": "g1:1/20",
		"w":      "g3:1/15 g2:1/39 g4:1/2", // g3 ended its call first
		"w>A":    "g2:2/11 g3:1/5 g4:1/1",
	}
	if !maps.Equal(got, want) {
		t.Errorf("by goroutine:\n%v\nwant\n%v", got, want)
	}
}
