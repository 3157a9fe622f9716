package analysis

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/tracefile"
)

// TestReadingAhead: Analyze makes the same profile whether its reader
// reads ahead, which has it take most events as Calls (ReadCall), or
// not, under every kind of option, for random traces and one of several
// batches.
func TestReadingAhead(t *testing.T) {
	traces := map[string][]byte{}
	for seed := range uint64(40) {
		data, _, err := tracetest.Random(seed)
		if err != nil {
			t.Fatal(err)
		}
		traces[fmt.Sprintf("random%d", seed)] = data
	}
	path := filepath.Join(t.TempDir(), "synthetic.trace")
	if err := tracetest.WriteSynthetic(path, 60_000); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	traces["synthetic"] = data
	options := map[string]Options{
		"none":                  {},
		"slowest, by goroutine": {Slowest: 3, ByGoroutine: true},
		"min time":              {Filter: &filter.Filter{MinTime: 20}},
		"focus":                 {Filter: &filter.Filter{Focus: regexp.MustCompile(`b|f`)}, Slowest: 2},
		"goroutine":             {Filter: &filter.Filter{G: 2}},
		"errors":                {OnlyErrors: true, Slowest: 1},
		"panics":                {OnlyPanics: true},
	}
	for name, data := range traces {
		for oname, o := range options {
			want := profileText(t, data, o, false)
			if got := profileText(t, data, o, true); got != want {
				t.Fatalf("%s, options %s: reading ahead, the profile is\n%s\nnot\n%s", name, oname, got, want)
			}
		}
	}
}

// profileText analyzes data, reading ahead or not, and returns what the
// profile holds, as text.
func profileText(t *testing.T, data []byte, o Options, ahead bool) string {
	r, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if ahead {
		r.ReadAhead()
		defer r.StopReadAhead()
	}
	p := Analyze(r, o)
	var b strings.Builder
	path := func(n *Node) string {
		var names []string
		for _, id := range n.Path() {
			names = append(names, p.Name(id))
		}
		return strings.Join(names, ";")
	}
	p.Walk(func(n *Node) {
		var from []string
		for m, c := range n.SpawnedFrom {
			from = append(from, fmt.Sprintf("%s=%d", path(m), c))
		}
		slices.Sort(from)
		fmt.Fprintf(&b, "%s: calls %d total %d self %d max %d panics %d errors %d %v slowest %v from %v", path(n), n.Calls, n.Total, n.Self, n.Max, n.Panics, n.Errors, n.ErrorIDs, n.Slowest, from)
		if n.ByGoroutine != nil {
			fmt.Fprintf(&b, " shares %v %v", n.ByGoroutine.Each, n.ByGoroutine.Others)
		}
		b.WriteByte('\n')
	})
	var ids []uint32
	for id := range p.Funcs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fmt.Fprintf(&b, "%+v\n", *p.Funcs[id])
	}
	// The goroutines' figures come in no particular order, each
	// goroutine's at one index of the three.
	var gs [][3]int64
	for i := range p.Lifetimes {
		gs = append(gs, [3]int64{p.Starts[i], p.Lifetimes[i], p.Work[i]})
	}
	slices.SortFunc(gs, func(a, b [3]int64) int { return slices.Compare(a[:], b[:]) })
	fmt.Fprintf(&b, "duration %v goroutines %d stats %+v end %q %v err %v goroutines' start, lifetime, work %v\n", p.Duration, p.Goroutines, p.Stats, p.End, p.Ended, p.Err, gs)
	return b.String()
}
