package tracewrite

import (
	"sync/atomic"
	"testing"

	"github.com/calltrail/calltrail/internal/wire"
	"github.com/calltrail/calltrail/tracefile"
)

// TestTotals: CountRaw counts what a reader would, skipping the function
// bitmap only while every function the registry knows has been seen.
func TestTotals(t *testing.T) {
	var entered atomic.Uint64
	tot := Totals{Entered: &entered}
	enter := func(fn uint32, ts int64) Raw { return Raw{RawEnter(7, fn), ts} }
	exit := func(k tracefile.ExitKind, ts int64) Raw { return Raw{RawExit(7, k), ts} }
	blocks := []struct {
		entered uint64 // functions registered before the block's events
		raw     []Raw
		called  uint64
	}{
		{2, []Raw{enter(1, 10), enter(2, 20), exit(tracefile.Return, 30)}, 2},
		// Nothing new: the bitmap is skipped, and the count holds.
		{2, []Raw{enter(1, 40), exit(tracefile.Return, 50), exit(tracefile.Panic, 60)}, 2},
		// A function registered since, entered late, among an error, a
		// wait for the writer and a value, whose time is its bits.
		{3, []Raw{enter(1, 70), enter(3, 80), {RawError(7, 1), 85}, exit(tracefile.Return, 85),
			{RawHeld(7, false), 86}, {RawHeld(7, true), 90},
			{7<<RawOpBits | (wire.ExtValue+2)<<2 | wire.OpExt, 1 << 60}, exit(tracefile.Return, 95)}, 3},
		// A function registered whose call was lost: it is never seen,
		// and the bitmap is never skipped again, nor miscounted.
		{4, []Raw{enter(2, 100), exit(tracefile.Goexit, 110)}, 3},
	}
	for i, b := range blocks {
		entered.Store(b.entered)
		tot.CountRaw(b.raw)
		if got := tot.Called(); got != b.called {
			t.Errorf("block %d: %d functions called, want %d", i, got, b.called)
		}
	}
	if tot.Exits != 6 || tot.Panics != 1 || tot.maxTicks != 110 {
		t.Errorf("exits %d, panics %d, latest %d; want 6, 1, 110", tot.Exits, tot.Panics, tot.maxTicks)
	}
}
