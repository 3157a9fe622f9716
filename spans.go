package calltrail

import (
	"encoding/binary"
	"sync"

	"github.com/calltrail/calltrail/internal/gstate"
	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/ring"
	"github.com/calltrail/calltrail/internal/tracewrite"
)

// SpanStart records that the calling goroutine started an OpenTelemetry
// span: span of trace, a child of parent (zero for a root; remote when the
// parent is another process's), of kind (OpenTelemetry's SpanKind) and
// named name. The calls the goroutine makes until the span ends, and
// those of the goroutines it starts meanwhile, ran for it.
//
// calltrail build, run and test call it from the OpenTelemetry SDK of a
// program that uses one (go.opentelemetry.io/otel/sdk/trace), through a
// span processor they add to every TracerProvider: programs need not call
// it. It costs a lock and two events, once per span. It reports whether
// the trace records the span.
//
// The processor also labels the goroutine with SpanLabel, the span's id,
// while the span is open (runtime/pprof's labels, which the goroutines it
// starts inherit): the samples of the trace's CPU profile then say which
// request they were taken for.
func SpanStart(trace [16]byte, span, parent [8]byte, remote bool, kind int, name string) bool {
	if Enabled && recording.Load() && span != [8]byte{} {
		return tr.span(records.Span{ID: span, Trace: trace, Parent: parent, Remote: remote, Kind: kind, Name: name}, false)
	}
	return false
}

// SpanEnd records that the calling goroutine ended span, which SpanStart
// recorded. It reports whether the span was recorded and the calling
// goroutine started it: then the processor gives the goroutine back the
// labels it had before the span.
func SpanEnd(span [8]byte) bool {
	if Enabled && tr != nil && span != [8]byte{} {
		return tr.span(records.Span{ID: span}, true)
	}
	return false
}

// SpanLabel is the key of the runtime/pprof label that names, in hex, the
// span a goroutine's samples were taken for (see SpanStart).
const SpanLabel = records.SpanLabel

// spanTable holds the spans started since the writer last wrote the span
// table, and the goroutine of each span open, so that an end is recorded
// only for a start that was, and in the stream of the goroutine that
// started the span.
type spanTable struct {
	mu      sync.Mutex
	pending []records.Span
	open    map[records.SpanID]uint64
	// lost counts spans not recorded: past maxOpenSpans open, or with
	// no room in the rings under the drop policy.
	lost uint64
}

// maxOpenSpans bounds the spans open at once that the trace follows: a
// program that starts spans and never ends them cannot grow the table
// without limit.
const maxOpenSpans = 1 << 16

// unwritten returns the spans started since the last call.
func (s *spanTable) unwritten() []records.Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := s.pending
	s.pending = nil
	return ps
}

// span records the start (end false) or the end of span sp: two events,
// the time, then the id as a value's bits. A start is an event of the
// calling goroutine. An end is an event of the goroutine that started the
// span, whichever ends it: events of one goroutine are read in the order
// they were recorded, and a reader must see the end among the events of
// the goroutine the span's calls ran in, not among another's, which may
// be read before or after them. It reports whether the start was
// recorded, or, for an end, whether the span was and the calling
// goroutine started it.
func (t *tracer) span(sp records.Span, end bool) bool {
	g, ts := stamp()
	caller := g
	if !end && t.seen[g&t.seenMask].Load() == g|quiet {
		return false // calltrail itself is calling an error's Error method
	}
	own := true
	t.spans.mu.Lock()
	if end {
		g0, ok := t.spans.open[sp.ID]
		if !ok {
			t.spans.mu.Unlock()
			return false // its start was not recorded
		}
		delete(t.spans.open, sp.ID)
		g, own = g0, g == g0
	} else {
		if t.spans.open == nil {
			t.spans.open = map[records.SpanID]uint64{}
		}
		if _, dup := t.spans.open[sp.ID]; dup || len(t.spans.open) >= maxOpenSpans {
			t.spans.lost++
			t.spans.mu.Unlock()
			return false
		}
		t.spans.open[sp.ID] = g
		sp.Name = cut(sp.Name, records.MaxSpanName)
		// In the table before its events are in a ring: the writer
		// writes the table, then the events it drained.
		t.spans.pending = append(t.spans.pending, sp)
	}
	t.spans.mu.Unlock()

	// The starting goroutine's record goes first, as before its first
	// call; an end's goroutine has one since its start.
	first := !end && t.seen[g&t.seenMask].Load() != g
	n := uint64(2)
	if first {
		n += 3
	}
	// Another goroutine's end goes after that goroutine's events so far,
	// and before those after: a barrier that stops the writer at its
	// ring's head, or, when that is not known, one that drains the rings
	// (see claim).
	var lim upto
	if !own && t.perP != 0 {
		var known bool
		if lim, known = t.ringOf(g); !known {
			lim = upto{ring: -1}
		}
	}
	s, pos, ts, ok := t.take(caller, n, ts, lim)
	if !ok {
		t.spans.mu.Lock()
		t.spans.lost++
		if !end {
			delete(t.spans.open, sp.ID) // its end is not to be recorded either
		}
		t.spans.mu.Unlock()
		return end && own
	}
	if first {
		t.seen[g&t.seenMask].Store(g)
		parent, gopc, startpc := gstate.Info()
		ring.Put(s.At(pos+1), parent, int64(gopc))
		ring.Put(s.At(pos+2), 0, int64(startpc))
		ring.Put(s.At(pos), g<<opBits|tracewrite.RawGoroutineOp, ts)
		pos += 3
	}
	// The id first, then the event: the writer, which stops at the
	// first slot not yet written, takes both or neither.
	ring.Put(s.At(pos+1), tracewrite.RawSpanID(g), int64(binary.LittleEndian.Uint64(sp.ID[:])))
	ring.Put(s.At(pos), tracewrite.RawSpan(g, end), ts)
	if !own && t.perP != 0 {
		// The goroutine's events after the end, which may be in the
		// ring the writer drains first, go after a barrier numbered
		// after the end's. The table first, then the owners: a claim
		// of g's that made it owner of a ring before this is undone,
		// and one after leaves both the table and the owner saying
		// that ring, as the table alone would.
		t.where[g&t.whereMask].Store(0)
		t.disown(g)
	}
	t.unpin()
	return own
}
