package tracefile

import (
	"encoding/binary"
	"fmt"
)

// spanState is what a Reader keeps to tie calls to the spans they ran
// under. A trace without spans never makes one, and reads as fast as
// before spans existed.
type spanState struct {
	table   map[SpanID]Span
	gs      map[uint64]*gspans // goroutines with open calls or open spans
	inherit map[uint64]SpanID  // the span each goroutine was started under
	keep    func(SpanID) bool  // the calls a view wants, by span; nil for all
	kept    map[SpanID]bool    // keep's answers
}

// gspans is one goroutine's spans: those it started and has not ended,
// innermost last, and the span of each of its open calls.
type gspans struct {
	open  []SpanID
	calls []spanCall
	// A span event waits for the id that follows it.
	pend    bool
	pendEnd bool
	pendT   int64
}

// spanCall is what the reader keeps of an open call for spans: its span,
// whether the view wants it, and its depth among the calls it wants.
type spanCall struct {
	span  SpanID
	kept  bool
	depth int32
}

func (rd *Reader) spans() *spanState {
	if rd.sp == nil {
		rd.sp = &spanState{table: map[SpanID]Span{}, gs: map[uint64]*gspans{}}
	}
	return rd.sp
}

// Span returns the entry of the span table with id.
func (rd *Reader) Span(id SpanID) (Span, bool) {
	rd.lock()
	defer rd.unlock()
	if rd.sp == nil {
		return Span{}, false
	}
	s, ok := rd.sp.table[id]
	return s, ok
}

// InheritSpans tells the reader which span each goroutine was started
// under: its calls outside any span of its own belong to that span. The
// goroutine that started it may have left the span by then, and its go
// statement is not in the trace, so a first pass over the trace finds
// them (package spans).
func (rd *Reader) InheritSpans(by map[uint64]SpanID) { rd.spans().inherit = by }

// KeepSpans makes the reader give only the calls whose span keep wants
// (see Event.Span), with their values and the events of those spans.
// Depths count the calls kept: a call whose caller is left out is
// outermost. Goroutine records are all given.
func (rd *Reader) KeepSpans(keep func(SpanID) bool) {
	sp := rd.spans()
	sp.keep, sp.kept = keep, map[SpanID]bool{}
}

// HasSpans reports whether the trace has named a span so far. The span
// table comes before the events of its spans, so a goroutine that began
// before it did cannot have been started under a span.
func (rd *Reader) HasSpans() bool {
	rd.lock()
	defer rd.unlock()
	return rd.sp != nil && len(rd.sp.table) > 0
}

// Narrowed reports whether the reader gives the calls of some spans only
// (KeepSpans).
func (rd *Reader) Narrowed() bool { return rd.sp != nil && rd.sp.keep != nil }

// KeepsSpan reports whether the reader gives the calls of span id: all
// spans', unless it was told KeepSpans.
func (rd *Reader) KeepsSpan(id SpanID) bool { return !rd.Narrowed() || rd.sp.wants(id) }

func (sp *spanState) g(g uint64) *gspans {
	gs := sp.gs[g]
	if gs == nil {
		gs = &gspans{}
		sp.gs[g] = gs
	}
	return gs
}

// wants reports whether the view wants calls of span id.
func (sp *spanState) wants(id SpanID) bool {
	if sp.keep == nil {
		return true
	}
	k, ok := sp.kept[id]
	if !ok {
		k = sp.keep(id)
		sp.kept[id] = k
	}
	return k
}

// enter ties ev, an enter of goroutine g, to its span, and reports
// whether the view wants it.
func (sp *spanState) enter(g uint64, ev *Event) bool {
	gs := sp.g(g)
	var span SpanID
	if n := len(gs.open); n > 0 {
		span = gs.open[n-1]
	} else {
		span = sp.inherit[g]
	}
	c := spanCall{span: span, kept: sp.wants(span)}
	if n := len(gs.calls); n > 0 {
		c.depth = gs.calls[n-1].depth
	}
	if c.kept {
		c.depth++
	}
	gs.calls = append(gs.calls, c)
	return sp.tie(ev, c)
}

// tie gives ev, an event of call c, c's span and, when the view selects,
// its depth among the calls kept, and reports whether the view wants it.
func (sp *spanState) tie(ev *Event, c spanCall) bool {
	ev.Span = c.span
	if sp.keep != nil {
		ev.Depth = int(c.depth)
	}
	return c.kept
}

// exit ties ev, an exit of goroutine g, to its call's span, and reports
// whether the view wants it.
func (sp *spanState) exit(g uint64, ev *Event) bool {
	gs := sp.gs[g]
	if gs == nil || len(gs.calls) == 0 {
		// A call open before the trace named its first span.
		return sp.wants(SpanID{})
	}
	c := gs.calls[len(gs.calls)-1]
	gs.calls = gs.calls[:len(gs.calls)-1]
	if len(gs.calls) == 0 && len(gs.open) == 0 && !gs.pend {
		delete(sp.gs, g)
	}
	return sp.tie(ev, c)
}

// value ties ev, a value of goroutine g's innermost call, to that call's
// span, and reports whether the view wants it.
func (sp *spanState) value(g uint64, ev *Event) bool {
	gs := sp.gs[g]
	if gs == nil || len(gs.calls) == 0 {
		return sp.wants(SpanID{})
	}
	return sp.tie(ev, gs.calls[len(gs.calls)-1])
}

// pending notes goroutine g's span event at time t, whose id comes next.
func (sp *spanState) pending(g uint64, end bool, t int64) {
	gs := sp.g(g)
	gs.pend, gs.pendEnd, gs.pendT = true, end, t
}

// id completes the span event of the current goroutine with its id.
func (sp *spanState) id(rd *Reader, ev *Event, bits uint64) (bool, error) {
	gs := sp.gs[rd.g]
	if gs == nil || !gs.pend {
		return false, fmt.Errorf("%w: a span id without a span event in goroutine %d", ErrCorrupt, rd.g)
	}
	gs.pend = false
	var id SpanID
	binary.LittleEndian.PutUint64(id[:], bits)
	if _, ok := sp.table[id]; !ok {
		// A flight recorder's snapshot may hold the end of a span it
		// no longer names: the span is known by its id alone.
		sp.table[id] = Span{ID: id}
	}
	*ev = Event{Kind: SpanStartEvent, G: rd.g, Time: gs.pendT, Span: id}
	if gs.pendEnd {
		ev.Kind = SpanEndEvent
		for i := len(gs.open) - 1; i >= 0; i-- {
			if gs.open[i] == id {
				gs.open = append(gs.open[:i], gs.open[i+1:]...)
				break
			}
		}
	} else {
		gs.open = append(gs.open, id)
	}
	if len(gs.open) == 0 && len(gs.calls) == 0 {
		delete(sp.gs, rd.g)
	}
	return sp.wants(id), nil
}

// readTable reads a span table chunk.
func (sp *spanState) readTable(d *dec) error {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.p)) {
		return fmt.Errorf("%w: span table claims %d spans in %d bytes", ErrCorrupt, n, len(d.p))
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		var s Span
		if len(d.p) < 32 {
			return fmt.Errorf("%w: span table cut short", ErrCorrupt)
		}
		copy(s.ID[:], d.p)
		copy(s.Trace[:], d.p[8:])
		copy(s.Parent[:], d.p[24:])
		d.p = d.p[32:]
		s.Remote = d.uvarint()&1 != 0
		s.Kind = int(d.uvarint() & 0xff)
		s.Name = d.string()
		if d.err == nil {
			sp.table[s.ID] = s
		}
	}
	return d.finish("span table")
}
