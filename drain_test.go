package calltrail

import (
	"io"
	"math"
	"math/rand"
	"os"
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
