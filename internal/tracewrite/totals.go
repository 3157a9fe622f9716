package tracewrite

import (
	"math"

	"github.com/calltrail/calltrail/internal/wire"
	"github.com/calltrail/calltrail/tracefile"
)

// Totals counts what the events of a trace hold, as they are written,
// for the summary chunk that ends the trace (see Encoder.End): the
// figures a reader would otherwise find only by reading every event.
//
// The zero Totals counts nothing yet. Its memory is a bit per function
// id and per goroutine id seen, in pages, so it is bounded by the ids a
// program uses rather than by its calls.
type Totals struct {
	Calls      uint64 // enter events
	Exits      uint64 // exit events
	Panics     uint64 // exits of calls left by a panic
	Called     uint64 // functions with at least one enter
	Goroutines uint64 // goroutines with events

	// The latest time of an event in nanoseconds, as a reader converts
	// it: at the rate of the clock points read before the event. maxNs
	// holds the latest Fold converted; maxTicks the latest since (any:
	// there is one).
	maxNs    int64
	maxTicks int64
	any      bool
	t0, ns0  int64 // the first clock point
	rate     float64
	clocks   int

	called []uint64               // bit per function id
	gs     map[uint64]*[64]uint64 // bit per goroutine id, in pages of 4096 ids
	page   *[64]uint64            // gs[pageOf], the page of the last goroutine counted
	pageOf uint64
}

// CountRaw counts the raw events AppendRaw encoded: enters, exits, errors
// and waits for the writer. Goroutine records are counted by Goroutine.
func (t *Totals) CountRaw(raw []Raw) {
	max := t.maxTicks
	if !t.any && len(raw) > 0 {
		max, t.any = math.MinInt64, true
	}
	for i := range raw {
		w := raw[i].Word
		switch w & 3 {
		case wire.OpEnter:
			t.enter(uint32(w&RawOpMask) >> 2)
		case wire.OpExit:
			t.exit(tracefile.ExitKind(w & RawOpMask >> 2))
		case wire.OpExt:
			if w&RawOpMask>>2 >= wire.ExtValue {
				continue // a value: its time field holds its bits
			}
		}
		if raw[i].Time > max {
			max = raw[i].Time
		}
	}
	t.maxTicks = max
}

// Clock notes a clock point (see Encoder.Clock): the rate at which the
// events counted from the last Fold on are converted, as a reader
// converts those that come after the point.
func (t *Totals) Clock(ticks, ns int64) {
	if t.clocks == 0 {
		t.t0, t.ns0, t.rate = ticks, ns, 1
	}
	t.clocks++
	t.rate = wire.Rate(t.t0, t.ns0, ticks, ns, t.rate)
}

// Fold converts the latest time counted since the last Fold into
// nanoseconds, at the rate of the latest clock point.
func (t *Totals) Fold() {
	if t.any {
		t.maxNs = max(t.maxNs, int64(max(wire.Nanos(t.t0, t.ns0, t.rate, t.maxTicks), 0)))
		t.any = false
	}
}

// Count counts one event ScanEvents found.
func (t *Totals) Count(e ScanEvent) {
	switch e.Kind {
	case tracefile.EnterEvent:
		t.enter(e.Func)
	case tracefile.ExitEvent:
		t.exit(e.Exit)
	}
	t.Goroutine(e.G, e.Ticks)
}

// Enter counts an enter of function fn by goroutine g at ticks, one not
// made by Batch.AppendRaw.
func (t *Totals) Enter(g uint64, fn uint32, ticks int64) {
	t.enter(fn)
	t.Goroutine(g, ticks)
}

func (t *Totals) enter(fn uint32) {
	t.Calls++
	i := int(fn >> 6)
	if i >= len(t.called) {
		t.called = append(t.called, make([]uint64, i+1-len(t.called))...)
	}
	if b := uint64(1) << (fn & 63); t.called[i]&b == 0 {
		t.called[i] |= b
		t.Called++
	}
}

func (t *Totals) exit(k tracefile.ExitKind) {
	t.Exits++
	if k == tracefile.Panic {
		t.Panics++
	}
}

// Goroutine counts goroutine g, whose record or event is at ticks.
func (t *Totals) Goroutine(g uint64, ticks int64) {
	if !t.any || ticks > t.maxTicks {
		t.maxTicks, t.any = ticks, true
	}
	p := t.page
	if p == nil || t.pageOf != g>>12 {
		if t.gs == nil {
			t.gs = map[uint64]*[64]uint64{}
		}
		if p = t.gs[g>>12]; p == nil {
			p = new([64]uint64)
			t.gs[g>>12] = p
		}
		t.page, t.pageOf = p, g>>12
	}
	if b := uint64(1) << (g & 63); p[g>>6&63]&b == 0 {
		p[g>>6&63] |= b
		t.Goroutines++
	}
}
