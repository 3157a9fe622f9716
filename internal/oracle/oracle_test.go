package oracle

import (
	"testing"

	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/query"
)

// TestGenerated checks every view against the others over generated
// traces of recursion cycles, goroutines, errors and panics, and
// snapshots of them.
func TestGenerated(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 20
	}
	for seed := range uint64(n) {
		data, script, err := tracetest.Random(seed)
		if seed%4 == 3 {
			// A flight recorder's snapshot of the same program: the
			// calls open at its window's start count from it.
			data, script, err = tracetest.RandomSnapshot(seed)
		}
		if err != nil {
			t.Fatal(err)
		}
		if errs := Check("generated", data); len(errs) > 0 {
			for _, err := range errs {
				t.Errorf("seed %d: %v", seed, err)
			}
			t.Fatalf("the trace's script:\n%s", script)
		}
	}
}

// TestPathFolder: folding each path from its parent's folded chain gives
// what folding it alone gives, over random traces and deep recursion.
func TestPathFolder(t *testing.T) {
	traces := [][]byte{tracetest.Recursion(300)}
	for seed := range uint64(40) {
		data, _, err := tracetest.Random(seed)
		if err != nil {
			t.Fatal(err)
		}
		traces = append(traces, data)
	}
	checked := 0
	for i, data := range traces {
		ev, err := readEvents(data)
		if err != nil {
			t.Fatal(err)
		}
		pf := newPathFolder(ev)
		for k := range int32(len(ev.parent)) {
			names := ev.names(k)
			if got, want := query.Text(pf.steps(k), " -> "), query.Text(query.FoldPath(names), " -> "); got != want {
				t.Errorf("trace %d: %v folds to %s from its parent, to %s alone", i, names, got, want)
			}
			checked++
		}
	}
	if checked < 1000 {
		t.Errorf("only %d paths checked", checked)
	}
}
