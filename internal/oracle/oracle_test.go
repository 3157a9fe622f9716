package oracle

import (
	"testing"

	"github.com/calltrail/calltrail/internal/tracetest"
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
