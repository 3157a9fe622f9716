package tracetest

import (
	"bufio"
	"fmt"
	"os"
	"time"

	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

// WriteSynthetic writes a trace of n calls to path, as benchmarks of
// the readers use it: 64 goroutines, each running chains four calls deep
// over 1,000 functions, 1µs per leaf call, in chunks of a quarter
// million events. The trace ends with a summary, as the runtime writes
// it.
func WriteSynthetic(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	e, err := tracewrite.NewEncoder(w, map[string]string{"program": "synthetic"})
	if err != nil {
		return err
	}
	funcs := make([]tracefile.Func, 1000)
	for i := range funcs {
		funcs[i] = tracefile.Func{Name: fmt.Sprintf("pkg.F%d", i), File: "f.go", Line: i + 1}
	}
	var tot tracewrite.Totals
	clock := func(ticks int64) {
		e.Clock(ticks, ticks)
		tot.Clock(ticks, ticks)
	}
	clock(0)
	e.Funcs(1, funcs)
	var b tracewrite.Batch
	var raw []tracewrite.Raw
	b.Totals = &tot
	// The goroutines' records, as the runtime writes one before a
	// goroutine's first call.
	for g := uint64(1); g <= 64; g++ {
		b.Goroutine(tracefile.Goroutine{ID: g}, 0)
		tot.Goroutine(g, 0)
	}
	t := int64(0)
	calls := 0
	flush := func() {
		clock(t)
		b.AppendRaw(raw) // counted in tot as the runtime's writer counts
		raw = raw[:0]
		tot.Fold()
		e.Events(&b)
	}
	for calls < n {
		g := uint64(calls/4%64 + 1)
		base := uint32(calls/4*7%250) * 4
		for d := uint32(0); d < 4; d++ {
			raw = append(raw, tracewrite.Raw{Word: tracewrite.RawEnter(g, base+d+1), Time: t})
			t += 10
		}
		for d := 0; d < 4; d++ {
			t += 1000
			raw = append(raw, tracewrite.Raw{Word: tracewrite.RawExit(g, tracefile.Return), Time: t})
		}
		calls += 4
		if len(raw) > 1<<18 {
			flush()
			if err := e.Flush(); err != nil {
				return err
			}
		}
	}
	flush()
	e.Stats(tracefile.Stats{Calls: tot.Calls, Flushes: 1})
	e.End("main returned", time.Unix(0, 0))
	e.Summary(&tot)
	if err := e.Flush(); err != nil {
		return err
	}
	return w.Flush()
}
