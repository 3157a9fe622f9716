package calltrail

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/calltrail/calltrail/internal/ring"
	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

// drainEvent is one event of a synthetic stream for the drain benchmarks.
type drainEvent struct {
	g     uint64
	fid   uint32
	enter bool
	ts    int64
}

// drainStream makes n events as a shard holds them in a call-heavy
// program: three goroutines that share the shard, each descending and
// returning through a call tree of 200 functions (a few of them hot),
// switching now and then, with gaps of a few to a few hundred clock units
// between events. Every call returns within the stream.
func drainStream(n int) []drainEvent {
	rng := rand.New(rand.NewSource(1))
	var evs []drainEvent
	stacks := map[uint64][]uint32{}
	g := uint64(17)
	ts := int64(1_000_000)
	for len(evs) < n {
		if rng.Intn(40) == 0 {
			g = []uint64{17, 25, 33}[rng.Intn(3)]
		}
		st := stacks[g]
		ts += 5 + rng.Int63n(60)
		if rng.Intn(10) == 0 {
			ts += rng.Int63n(5000)
		}
		if len(st) > 0 && (len(st) > 30 || rng.Intn(2) == 0) || len(evs)+len(st) >= n {
			evs = append(evs, drainEvent{g: g, fid: st[len(st)-1], ts: ts})
			stacks[g] = st[:len(st)-1]
			continue
		}
		fid := uint32(1 + rng.Intn(8))
		if rng.Intn(4) == 0 {
			fid = uint32(1 + rng.Intn(200))
		}
		evs = append(evs, drainEvent{g: g, fid: fid, enter: true, ts: ts})
		stacks[g] = append(st, fid)
	}
	return evs[:n]
}

// fillShard writes evs into s as the hot path does.
func fillShard(s *ring.Ring, evs []drainEvent) {
	for _, e := range evs {
		pos, _ := s.Reserve(1, 0)
		w := tracewrite.RawExit(e.g, tracefile.Return)
		if e.enter {
			w = tracewrite.RawEnter(e.g, e.fid)
		}
		ring.Put(s.At(pos), w, e.ts)
	}
}

// BenchmarkDrain measures the writer's cost per event: reading the
// written slots of a shard, encoding them, handing the slots back, and
// framing the batch as a chunk (checksum included), with buffers reused
// from one pass to the next as the writer reuses them. The
// events are drainStream's, not one call repeated, so that branches on
// event kinds and varint lengths are as (un)predictable as in a real
// program.
func BenchmarkDrain(b *testing.B) {
	benchDrain(b, drainStream(1<<16))
}

// benchDrain fills a ring with evs and drains it, b.N events in all.
func benchDrain(b *testing.B, evs []drainEvent) {
	n := len(evs)
	w := &writer{t: &tracer{rings: []ring.Ring{ring.New(1 << 16)}}}
	s := &w.t.rings[0]
	// Counted for the summary, as the writer of a trace file counts,
	// its registry knowing the functions evs enter.
	fns := map[uint32]bool{}
	for _, e := range evs {
		fns[e.fid] = true
	}
	var entered atomic.Uint64
	entered.Store(uint64(len(fns)))
	w.batch.Totals = &tracewrite.Totals{Entered: &entered}
	enc, _ := tracewrite.NewEncoder(io.Discard, nil)
	size := 0
	b.ResetTimer()
	for done := 0; done < b.N; done += n {
		b.StopTimer()
		fillShard(s, evs)
		b.StartTimer()
		w.drainRing(0, 0, math.MaxUint64, noUpto)
		size = w.batch.Size()
		enc.Events(&w.batch)
		enc.Flush()
	}
	b.ReportMetric(float64(size)/float64(n), "B/event")
}

// TestDrainStream checks that draining drainStream's events into a trace
// reads them back as written.
func TestDrainStream(t *testing.T) {
	const n = 1 << 16
	w := &writer{t: &tracer{rings: []ring.Ring{ring.New(n)}}}
	s := &w.t.rings[0]
	evs := drainStream(n)
	fillShard(s, evs)
	if got, _ := w.drainRing(0, 0, math.MaxUint64, noUpto); got != n {
		t.Fatalf("drained %d events of %d", got, n)
	}
	batch := &w.batch
	for i, sl := range s.Run(0, n) {
		if sl != (ring.Slot{}) {
			t.Fatalf("slot %d not zeroed after draining", i)
		}
	}
	var slow tracewrite.Batch
	for _, e := range evs {
		if e.enter {
			slow.Enter(e.g, e.fid, e.ts)
		} else {
			slow.Exit(e.g, tracefile.Return, e.ts)
		}
	}
	if batch.Size() != slow.Size() || batch.Len() != slow.Len() || batch.Enters() != slow.Enters() {
		t.Errorf("drained %d events (%d enters) in %d bytes, want %d (%d) in %d", batch.Len(), batch.Enters(), batch.Size(), slow.Len(), slow.Enters(), slow.Size())
	}
}

// traceStream reads the first n events of a recorded trace as drain
// events, with times in the trace's nanoseconds (about one clock unit).
func traceStream(tb testing.TB, path string, n int) []drainEvent {
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	r, err := tracefile.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var evs []drainEvent
	for len(evs) < n {
		ev, err := r.Next()
		if err != nil {
			break
		}
		switch ev.Kind {
		case tracefile.EnterEvent:
			evs = append(evs, drainEvent{g: ev.G, fid: ev.Func, enter: true, ts: ev.Time})
		case tracefile.ExitEvent:
			if ev.Exit != tracefile.Unfinished {
				evs = append(evs, drainEvent{g: ev.G, ts: ev.Time})
			}
		}
	}
	return evs
}

// BenchmarkDrainTrace is BenchmarkDrain on events a real program recorded
// (CALLTRAIL_DRAIN_TRACE, a trace file).
func BenchmarkDrainTrace(b *testing.B) {
	path := os.Getenv("CALLTRAIL_DRAIN_TRACE")
	if path == "" {
		b.Skip("set CALLTRAIL_DRAIN_TRACE to a trace file")
	}
	benchDrain(b, traceStream(b, path, 1<<16))
}

// TestBarrierOrder checks, over generated histories, that the writer puts
// each goroutine's events back in order when they are spread over the
// rings of Ps. A history is a random sequence of steps: a goroutine runs
// on some P and takes slots in its ring (takeIn, as the runtime does,
// barriers included), for calls or to start a span, writing them then or,
// as a goroutine that has not finished writing, a few steps later; a
// goroutine ends another's span (its end is an event of the span's
// goroutine, in the ender's ring, as tracer.span does it); or the writer
// drains the rings, with a random lag. The rings are small, so they fill
// and wrap; a table of the goroutines' latest rings of two entries makes
// goroutines lose their entries. Each goroutine's events, read back from
// the trace, must be all that were taken for it, in the order they were
// taken.
func TestBarrierOrder(t *testing.T) {
	for seed := range int64(1000) {
		barrierHistory(t, seed)
	}
}

func barrierHistory(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	const ps, gs, steps = 3, 5, 400
	tr := makeTracer(ps+1, 32, fullWait) // and the shared ring
	if seed%2 == 1 {
		tr.whereMask = 1
	}
	w := &writer{t: tr}
	var buf bytes.Buffer
	enc, err := tracewrite.NewEncoder(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Calls enter functions numbered from 1, a goroutine's n-th call
	// entering function n; spans are numbered from 1 too.
	enc.Funcs(1, make([]tracefile.Func, steps*3))
	spans := make([]tracefile.Span, steps)
	for k := range spans {
		binary.LittleEndian.PutUint64(spans[k].ID[:], uint64(k+1))
	}
	enc.Spans(spans)

	// A write is slots taken in a ring and written then or later: calls,
	// or a span's start or end.
	type write struct {
		ring       int
		pos        uint64
		g          uint64 // whose events they are
		first      uint32 // the first call's number
		n          uint64
		span       uint64 // a span's start or end, not calls
		end        bool
		onBehalfOf int // the goroutine that took the slots
	}
	var (
		ts      int64
		calls   [gs + 1]uint32   // calls taken so far, by goroutine
		want    [gs + 1][]string // what was taken for each goroutine, in order
		open    [gs + 1][]uint64 // spans each goroutine started, not ended
		spanN   uint64
		pending [gs + 1]*write // a goroutine's slots not yet written
		onP     [ps]int        // the goroutine whose slots of a P's ring are not yet written
	)
	put := func(wr *write) {
		s := &tr.rings[wr.ring]
		ts++
		if wr.span != 0 {
			ring.Put(s.At(wr.pos+1), tracewrite.RawSpanID(wr.g), int64(wr.span))
			ring.Put(s.At(wr.pos), tracewrite.RawSpan(wr.g, wr.end), ts)
		}
		for k := range wr.n {
			ring.Put(s.At(wr.pos+k), tracewrite.RawEnter(wr.g, wr.first+uint32(k)), ts)
		}
		pending[wr.onBehalfOf] = nil
		if wr.ring < ps {
			onP[wr.ring] = 0
		}
	}
	drain := func(lag uint64) {
		w.drain(lag)
		enc.Events(&w.batch)
	}
	for range steps {
		g := 1 + rng.Intn(gs)
		if rng.Intn(4) == 0 {
			drain(uint64(rng.Intn(8)))
			continue
		}
		if pending[g] != nil {
			put(pending[g])
			continue
		}
		i := rng.Intn(ps + 1)
		if i < ps && onP[i] != 0 {
			continue // another goroutine runs on that P until it has written
		}
		wr := &write{ring: i, g: uint64(g), onBehalfOf: g}
		var lim upto
		switch k := rng.Intn(8); {
		case k == 0:
			spanN++
			wr.span, wr.n = spanN, 0
		case k == 1:
			// g ends a span another goroutine, o, started: after o's
			// events so far, which o has written (an end while o
			// writes is concurrent with its events, and may come
			// before them or after).
			o := 1 + rng.Intn(gs)
			if o == g || len(open[o]) == 0 || pending[o] != nil {
				continue
			}
			wr.g, wr.span, wr.end = uint64(o), open[o][0], true
			var known bool
			if lim, known = tr.ringOf(uint64(o)); !known {
				lim = upto{ring: -1}
			}
		default:
			wr.first, wr.n = calls[g]+1, uint64(1+rng.Intn(3))
		}
		n := wr.n
		if wr.span != 0 {
			n = 2
		}
		pos, ok := tr.takeIn(i, uint64(g), n, lim)
		if !ok {
			drain(0)
			continue
		}
		wr.pos = pos
		switch {
		case wr.end:
			open[wr.g] = open[wr.g][1:]
			want[wr.g] = append(want[wr.g], fmt.Sprintf("end%d", wr.span))
		case wr.span != 0:
			open[g] = append(open[g], wr.span)
			want[g] = append(want[g], fmt.Sprintf("start%d", wr.span))
		default:
			calls[g] += uint32(wr.n)
			for k := range wr.n {
				want[g] = append(want[g], fmt.Sprint(wr.first+uint32(k)))
			}
		}
		if i < ps {
			onP[i] = g
		}
		if rng.Intn(3) == 0 && !wr.end {
			pending[g] = wr // written a few steps later
			continue
		}
		put(wr)
		if wr.end {
			// The span's goroutine's next events go behind a barrier
			// (see tracer.span).
			tr.where[wr.g&tr.whereMask].Store(0)
		}
	}
	for g := range pending {
		if pending[g] != nil {
			put(pending[g])
		}
	}
	drain(0)
	drain(0)
	for i := range tr.rings {
		if tr.rings[i].Pending() {
			t.Fatalf("seed %d: ring %d still holds events after the writer drained every ring", seed, i)
		}
	}
	enc.Flush()

	r, err := tracefile.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var got [gs + 1][]string
	var ev tracefile.Event
	for {
		if err := r.Read(&ev); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		span := binary.LittleEndian.Uint64(ev.Span[:])
		switch ev.Kind {
		case tracefile.EnterEvent:
			got[ev.G] = append(got[ev.G], fmt.Sprint(ev.Func))
		case tracefile.SpanStartEvent:
			got[ev.G] = append(got[ev.G], fmt.Sprintf("start%d", span))
		case tracefile.SpanEndEvent:
			got[ev.G] = append(got[ev.G], fmt.Sprintf("end%d", span))
		}
	}
	for g := 1; g <= gs; g++ {
		if strings.Join(got[g], " ") != strings.Join(want[g], " ") {
			t.Fatalf("seed %d: goroutine %d's events read back as\n%v\nwant\n%v", seed, g, got[g], want[g])
		}
	}
}
