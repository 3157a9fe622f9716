package tracewrite

import (
	"math"
	"sync/atomic"

	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/wire"
)

// Totals counts what the events of a trace hold, as they are written,
// for the summary chunk that ends the trace (see Encoder.Summary): the
// figures a reader would otherwise find only by reading every event.
//
// The zero Totals counts nothing yet. Its memory is a bit per function
// id and per goroutine id seen, in pages, so it is bounded by the ids a
// program uses rather than by its calls.
type Totals struct {
	Calls      uint64 // enter events
	Exits      uint64 // exit events
	Panics     uint64 // exits of calls left by a panic
	Goroutines uint64 // goroutines with events

	// Entered, when set, counts the functions that may have calls
	// among the events, each counted before its first call is recorded.
	// While it equals the functions whose calls CountRaw has seen, no
	// event can be of another, and CountRaw skips the function bitmap.
	Entered *atomic.Uint64
	nCalled uint64 // bits set in called

	// called has a bit per function id entered, every id a raw event
	// can hold (RawOpBits less the op's two): 512 KiB of address space,
	// of which a program touches an eighth of a byte per function. Bit 0
	// of word 0, which no function has, is where countCalled sets the
	// bit of other events.
	called *[1 << (RawOpBits - 2 - 6)]uint64

	gs     map[uint64]*[64]uint64 // bit per goroutine id, in pages of 4096 ids
	page   *[64]uint64            // gs[pageOf], the page of the last goroutine counted
	pageOf uint64

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
}

// Called returns the number of functions entered.
func (t *Totals) Called() uint64 { return t.nCalled }

// CountRaw counts the raw events AppendRaw encoded (enters, exits, errors
// and waits for the writer) but for the number of enters, which AppendRaw
// counts itself (see Batch.Enters). Goroutine records are counted by
// Goroutine.
//
// It runs in the writer's inner loop, after AppendRaw, so it does not
// branch on the kind of an event, which a program's calls make
// unpredictable.
func (t *Totals) CountRaw(raw []Raw) {
	if len(raw) == 0 {
		return
	}
	mx := t.maxTicks
	if !t.any {
		mx, t.any = math.MinInt64, true
	}
	var exits, panics uint64
	for i := range raw {
		op := raw[i].Word & RawOpMask
		ts := raw[i].Time
		if op >= wire.ExtValue<<2 && op&3 == wire.OpExt {
			continue // a value: its time field holds its bits
		}
		mx = max(mx, ts)
		exits += (op &^ (op >> 1)) & 1 // ops 1 (an exit) and 3 (an extended op) are odd
		if op == uint64(records.Panic)<<2|wire.OpExit {
			panics++ // rare: predicted
		}
	}
	t.maxTicks = mx
	t.Exits += exits
	t.Panics += panics
	// Entered is read after AppendRaw loaded the events' words: a
	// function counted before its first call's event was written is
	// counted here.
	if t.Entered == nil || t.Entered.Load() != t.nCalled {
		t.countCalled(raw)
	}
}

// countCalled sets the bits of the functions raw enters: every event sets
// a bit, an enter its function's, any other bit 0, which no function has.
func (t *Totals) countCalled(raw []Raw) {
	if t.called == nil {
		t.called = new([1 << (RawOpBits - 2 - 6)]uint64)
	}
	called := t.called
	for i := range raw {
		op := raw[i].Word & RawOpMask
		// An enter's function, 0 for another event, without a branch:
		// op&3 - 1 wraps around, setting the top bit, for an enter only.
		fn := op >> 2 & -((op&3 - 1) >> 63)
		// Set only when unset: a store each time would chain every
		// event to the one before through the same word.
		if b := uint64(1) << (fn & 63); called[fn>>6%uint64(len(called))]&b == 0 {
			called[fn>>6%uint64(len(called))] |= b
			if fn != 0 {
				t.nCalled++
			}
		}
	}
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
	// The trace lasts until its latest clock point, as a reader reads
	// it (tracefile.Reader.MaxTime).
	if ns >= 0 && ns <= wire.MaxNanos {
		t.maxNs = max(t.maxNs, ns)
	}
}

// Fold converts the latest time counted since the last Fold into
// nanoseconds, at the rate of the latest clock point.
func (t *Totals) Fold() {
	if t.any {
		t.maxNs = max(t.maxNs, int64(max(wire.Nanos(t.t0, t.ns0, t.rate, t.maxTicks), 0)))
		t.any = false
	}
}

// Count counts one event ScanEvents found. A goroutine counts by its
// calls, as a reader counts it: not by its record or its spans.
func (t *Totals) Count(e ScanEvent) {
	switch e.Kind {
	case records.EnterEvent:
		t.enter(e.Func)
	case records.ExitEvent:
		t.Exits++
		if e.Exit == records.Panic {
			t.Panics++
		}
	default:
		t.At(e.Ticks)
		return
	}
	t.Goroutine(e.G, e.Ticks)
}

// At notes an event at ticks that counts no goroutine: a goroutine's
// record or a span's event, where the goroutine may make no call (a
// snapshot holds the records of goroutines gone before its window).
func (t *Totals) At(ticks int64) {
	if !t.any || ticks > t.maxTicks {
		t.maxTicks, t.any = ticks, true
	}
}

// Enter counts an enter of function fn by goroutine g at ticks, one not
// made by Batch.AppendRaw.
func (t *Totals) Enter(g uint64, fn uint32, ticks int64) {
	t.enter(fn)
	t.Goroutine(g, ticks)
}

func (t *Totals) enter(fn uint32) {
	t.Calls++
	if t.called == nil {
		t.called = new([1 << (RawOpBits - 2 - 6)]uint64)
	}
	if b := uint64(1) << (fn & 63); t.called[fn>>6%uint32(len(t.called))]&b == 0 {
		t.called[fn>>6%uint32(len(t.called))] |= b
		t.nCalled++
	}
}

// Goroutine counts goroutine g, whose call, or record before its first
// call, is at ticks.
func (t *Totals) Goroutine(g uint64, ticks int64) {
	t.At(ticks)
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
