package spans_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/spans"
	"github.com/calltrail/calltrail/tracefile"
)

// requests writes a random trace of requests and returns its script with
// what each call ran for, by the rule the package applies, worked out as
// the script is written: the innermost span open on the call's goroutine,
// or the span of the call that started the goroutine. Goroutines start
// from deep in others' calls, some while their creator waits for them
// (their events in the middle of the creator's), some after their creator
// returned; spans nest, start in one call and end in another, and some
// calls run under none.
type requests struct {
	r      *rand.Rand
	b      strings.Builder
	t      int64
	nextG  uint64
	nextS  uint64
	want   map[uint64]map[string]int // calls by span, then function
	parent map[uint64]uint64         // span's parent
	budget int
}

var maxBudget = 400

type gstate struct {
	id      uint64
	open    []uint64 // spans open, innermost last
	inherit uint64
}

func (q *requests) at() int64 { q.t += 1 + q.r.Int64N(50); return q.t }

func (q *requests) count(span uint64, fn string) {
	if q.want[span] == nil {
		q.want[span] = map[string]int{}
	}
	q.want[span][fn]++
}

// call writes a call of fn by goroutine g at depth, with its callees.
func (q *requests) call(g *gstate, fn string, depth int) {
	q.budget++
	span := g.inherit
	if n := len(g.open); n > 0 {
		span = g.open[n-1]
	}
	fmt.Fprintf(&q.b, "%d +%s %d\n", g.id, fn, q.at())
	q.count(span, fn)
	started := 0
	var later []*gstate
	for n := q.r.IntN(4); n > 0 && depth < 8 && q.budget < maxBudget; n-- {
		switch q.r.IntN(6) {
		case 0: // a span starts here
			q.nextS++
			p := uint64(0)
			if k := len(g.open); k > 0 && q.r.IntN(3) > 0 {
				p = g.open[k-1]
			} else if g.inherit != 0 && q.r.IntN(2) == 0 {
				p = g.inherit
			}
			q.parent[q.nextS] = p
			fmt.Fprintf(&q.b, "%d span %d %d s%d %d\n", g.id, q.nextS, p, q.nextS, q.at())
			g.open = append(g.open, q.nextS)
			started++
		case 1: // a goroutine starts here
			q.nextG++
			child := &gstate{id: q.nextG, inherit: span}
			if k := len(g.open); k > 0 {
				child.inherit = g.open[k-1]
			}
			fmt.Fprintf(&q.b, "%d go %d %s %d\n", child.id, g.id, fn, q.at())
			if q.r.IntN(2) == 0 {
				q.call(child, "main.work", 0) // while fn waits for it
			} else {
				later = append(later, child)
			}
		default:
			q.call(g, []string{"main.a", "main.b", "main.rec"}[q.r.IntN(3)], depth+1)
		}
	}
	// Spans started in this call end in it, most of them.
	for ; started > 0; started-- {
		if q.r.IntN(4) == 0 {
			break // left open: ended by a caller, or never
		}
		s := g.open[len(g.open)-1]
		g.open = g.open[:len(g.open)-1]
		fmt.Fprintf(&q.b, "%d end %d %d\n", g.id, s, q.at())
	}
	fmt.Fprintf(&q.b, "%d - %d\n", g.id, q.at())
	for _, c := range later {
		// After the creator returned: its parent goes on first.
		q.call(c, "main.late", 0)
	}
}

// TestAttribution checks, over random traces, that the reader given the
// spans Read finds ties every call to the span the rule says, and that
// Keep narrows a trace to exactly the calls of one request's spans.
func TestAttribution(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		q := &requests{r: rand.New(rand.NewPCG(seed, 7)), nextG: 1, want: map[uint64]map[string]int{}, parent: map[uint64]uint64{}}
		q.call(&gstate{id: 1}, "main.main", 0)
		data, err := tracetest.Build(q.b.String())
		if err != nil {
			t.Fatal(err)
		}
		r, err := tracefile.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		ix, err := spans.Read(r)
		if err != nil {
			t.Fatal(err)
		}
		got := map[uint64]map[string]int{}
		r, _ = tracefile.NewReader(bytes.NewReader(data))
		r.InheritSpans(ix.Inherit)
		var ev tracefile.Event
		for r.Read(&ev) == nil {
			if ev.Kind == tracefile.EnterEvent {
				s := uint64(0)
				if ev.Span.IsValid() {
					fmt.Sscanf(ev.Span.String(), "%x", &s)
				}
				if got[s] == nil {
					got[s] = map[string]int{}
				}
				got[s][r.Func(ev.Func).Name]++
			}
		}
		if !reflect.DeepEqual(got, q.want) {
			t.Fatalf("seed %d: calls by span\n%v\nwant\n%v\nscript:\n%s", seed, got, q.want, q.b.String())
		}

		// Each root span's trace, narrowed: its calls and its
		// descendants', in every goroutine.
		for root, p := range q.parent {
			if p != 0 {
				continue
			}
			want := map[string]int{}
			for s, calls := range q.want {
				a := s
				for a != 0 && q.parent[a] != 0 {
					a = q.parent[a]
				}
				if s == 0 || a != root {
					continue
				}
				for fn, n := range calls {
					want[fn] += n
				}
			}
			id := tracetest.SpanID(root)
			keep, ok := ix.Keep(ix.ByID[id].Trace.String(), nil)
			if !ok {
				t.Fatalf("seed %d: Keep of span %d's trace selects nothing", seed, root)
			}
			if got := narrowed(t, data, ix, keep); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d: trace of span %d: calls\n%v\nwant\n%v\nscript:\n%s", seed, root, got, want, q.b.String())
			}
			// A name matches the span and those under it: the same.
			keep, _ = ix.Keep("", regexp.MustCompile(fmt.Sprintf("^s%d$", root)))
			if got := narrowed(t, data, ix, keep); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d: spans named s%d: calls\n%v\nwant\n%v", seed, root, got, want)
			}
		}
	}
}

// narrowed counts the calls of data by function as a view reads them
// through keep, checking that their depths nest.
func narrowed(t *testing.T, data []byte, ix *spans.Index, keep func(tracefile.SpanID) bool) map[string]int {
	t.Helper()
	r, _ := tracefile.NewReader(bytes.NewReader(data))
	r.InheritSpans(ix.Inherit)
	r.KeepSpans(keep)
	got := map[string]int{}
	depth := map[uint64]int{}
	var ev tracefile.Event
	for {
		err := r.Read(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case tracefile.EnterEvent:
			got[r.Func(ev.Func).Name]++
			depth[ev.G]++
			if ev.Depth != depth[ev.G] {
				t.Fatalf("goroutine %d: an enter at depth %d after %d open", ev.G, ev.Depth, depth[ev.G]-1)
			}
		case tracefile.ExitEvent:
			if ev.Depth != depth[ev.G] {
				t.Fatalf("goroutine %d: an exit at depth %d with %d open", ev.G, ev.Depth, depth[ev.G])
			}
			depth[ev.G]--
		}
	}
	return got
}
