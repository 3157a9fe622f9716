package calltrail

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/calltrail/calltrail/internal/clock"
	"github.com/calltrail/calltrail/internal/indented"
	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/ring"
	"github.com/calltrail/calltrail/internal/tracewrite"
)

// writer is the background goroutine that empties the rings into the
// trace file. It is the only reader of the rings and the only user of the
// encoder.
type writer struct {
	t        *tracer
	out      *sink
	enc      *tracewrite.Encoder
	batch    tracewrite.Batch // the events drained, in the order drained
	gbatch   tracewrite.Batch // goroutine records, written first
	draining []bool           // by ring: drainRing is draining it
	profiles *profiler        // the Go runtime's profiles, or nil
	text     *textView        // the live indented view, or nil
	every    time.Duration
	startNs  int64  // clock.Nanotime() when tracing started
	lag      uint64 // slots drain leaves to settle, see drain
	sites    map[uintptr]pcSite
	calls    atomic.Uint64 // calls written; read by Counters too
	flushes  uint64
	totals   tracewrite.Totals // of the events in the file, for its summary chunk

	// The flight recorder, when there is one (CALLTRAIL_MODE=flight):
	// each cycle's chunks go through seg into segBuf, then into flight,
	// instead of into the file.
	flight   *flight
	seg      *tracewrite.Encoder
	segBuf   bytes.Buffer
	segStart int64 // when the segment being filled began, in ns
	// The earliest time of an event in the segment being filled, if
	// segEvents: an event stamped before a cycle's clock read but
	// published, or drained, after it goes into the next segment, which
	// so may hold events from before it began.
	segEarliest int64
	segEvents   bool
	triggers    *triggers // CALLTRAIL_TRIGGER's, or nil

	reqs   chan flushReq
	wakeup chan struct{} // a goroutine waits for room
	mu     sync.Mutex
	done   bool // the file is closed
}

// flushReq asks the writer to write everything recorded so far, then an
// end chunk if end is not empty, and to close the file if stop is set.
type flushReq struct {
	end  string
	stop bool
	ack  chan struct{}
}

const (
	minSleep   = 20 * time.Microsecond
	maxSleep   = 1 * time.Millisecond
	flushBytes = 1 << 20               // write when this much is encoded
	settle     = 50 * time.Millisecond // how long a final flush waits for slots being written
)

// request hands r to the writer and waits until it is done. It returns at
// once if the trace is already closed.
func (w *writer) request(end string, stop bool) {
	w.mu.Lock()
	closed := w.done
	w.mu.Unlock()
	if closed {
		return
	}
	ack := make(chan struct{})
	w.reqs <- flushReq{end: end, stop: stop, ack: ack}
	<-ack
}

func (w *writer) run() {
	w.loop()
	// The file is closed: answer late requests, and nothing else.
	for r := range w.reqs {
		close(r.ack)
	}
}

// loop drains and writes until a request stops the trace.
func (w *writer) loop() {
	sleep := minSleep
	timer := time.NewTimer(sleep)
	last := time.Now()
	for {
		lag := w.lag
		if w.t.waiting() {
			lag = 0 // a goroutine waits: make all the room there is
		}
		n := w.drain(lag)
		w.t.wakeWaiters(false)
		limit := flushBytes
		if w.flight != nil {
			limit = w.flight.segmentBytes()
		}
		if w.pendingBytes() >= limit || time.Since(last) >= w.every {
			w.drain(0)
			w.write()
			last = time.Now()
		}
		if n >= 1024 {
			sleep = minSleep
			select {
			case r := <-w.reqs:
				if w.serve(r) {
					return
				}
			default:
			}
			continue
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(sleep)
		select {
		case r := <-w.reqs:
			if w.serve(r) {
				return
			}
		case <-w.wakeup:
			sleep = minSleep / 2
		case <-timer.C:
		}
		sleep = min(sleep*2, maxSleep)
	}
}

// wake asks the writer for a pass over the rings now, without waiting.
func (w *writer) wake() {
	select {
	case w.wakeup <- struct{}{}:
	default:
	}
}

// serve carries out r and reports whether the trace is now closed.
func (w *writer) serve(r flushReq) (closed bool) {
	w.mu.Lock()
	closed = w.done
	w.mu.Unlock()
	if !closed {
		// Slots handed out but not yet filled belong to goroutines
		// between reserve and put; give them a moment.
		deadline := time.Now().Add(settle)
		for {
			w.drain(0)
			w.t.wakeWaiters(false)
			if !w.anyPending() || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Microsecond)
		}
		w.write()
		if r.end != "" && w.triggers != nil {
			w.triggers.ended()
		}
		if r.end != "" {
			// The trace ends, at least for now: the profiles go in
			// before the end chunk, once.
			for name, data := range w.profiles.stop() {
				w.enc.Profile(name, data)
			}
			w.enc.End(r.end, time.Now())
			w.enc.Summary(&w.totals)
			w.flushFile()
		}
		if r.stop {
			checkEndpoint() // a program that ends within a second
			// Nothing more will be written: goroutines waiting for
			// room give up, and none waits from now on.
			w.t.stopping.Store(true)
			w.t.wakeWaiters(true)
			if w.text != nil {
				w.text.close()
			}
			if err := w.out.Close(); err != nil {
				fmt.Fprintf(os.Stderr, "calltrail: writing the trace: %v\n", err)
			}
			w.mu.Lock()
			w.done = true
			w.mu.Unlock()
		} else {
			w.out.Sync() // what was asked for is in the file
		}
	}
	close(r.ack)
	return r.stop || closed
}

func (w *writer) anyPending() bool {
	for i := range w.t.rings {
		if w.t.rings[i].Pending() {
			return true
		}
	}
	return false
}

func (w *writer) pendingBytes() int { return w.batch.Size() }

// drain moves complete events out of the rings into the batch and
// returns how many it moved. It leaves the newest lag slots of each ring
// alone: those cache lines are likely still in the producing core's cache,
// and reading them there costs a transfer per line; a little later they
// sit in the shared cache and stream in cheaply.
func (w *writer) drain(lag uint64) int {
	n := 0
	for i := range w.t.rings {
		k, _ := w.drainRing(i, lag, math.MaxUint64, noUpto)
		n += k
	}
	return n
}

// noUpto is drainRing's upto when nothing but the ring limits it.
const noUpto = math.MaxUint64

// drainRing moves the events of ring i into the batch, from its tail on:
// up to lag slots short of its head and to position upto at most, and no
// further than a slot not yet written or a barrier numbered above limit.
//
// A goroutine's events went to several rings, with a barrier before its
// first event in each (see claim): drainRing resolves a barrier numbered
// up to limit before it moves past it, draining the goroutine's previous
// ring (all the other rings when the barrier does not know it), but one
// it is draining already, as far as it goes before the barrier.
// Those rings then hold nothing of the barrier's goroutine that was
// recorded before it. Barriers numbered after it, where it stops them,
// were taken after it, so after the goroutine's events. A barrier before
// another goroutine's span end limits the draining of that goroutine's
// ring to where its events ended with the span (markUpto).
//
// It returns how many slots it moved, and whether it stopped short of
// all that goes before limit (or upto): at a barrier it could not
// resolve, or at a slot not yet written that another goroutine's events
// of then may be behind: in the shared ring, which goroutines take in
// turns and fill in any order, or before upto. In a ring of a P, slots
// are written in order by the goroutine running on it, and one not yet
// written is the latest.
func (w *writer) drainRing(i int, lag, limit, upto uint64) (moved int, short bool) {
	s := &w.t.rings[i]
	tail, avail := s.Readable()
	if upto != noUpto {
		avail = min(avail, ring.Dist(tail, upto))
		if ring.Reached(tail, upto) {
			avail = 0
		}
	}
	if avail <= lag {
		return 0, false
	}
	all := avail // lag included
	avail -= lag
	start := tail
	for avail > 0 {
		run := s.Run(tail, avail)
		n := w.batch.AppendRaw(run)
		if w.flight != nil {
			if t, ok := tracewrite.EarliestRaw(run[:n]); ok && (!w.segEvents || t < w.segEarliest) {
				w.segEarliest, w.segEvents = t, true
			}
		}
		if w.text != nil {
			w.textEvents(run[:n])
		}
		tail += uint64(n)
		avail -= uint64(n)
		if avail == 0 {
			break
		}
		sl := s.At(tail)
		word := ring.Load(sl)
		switch {
		case word == 0:
			// Handed out but not yet written.
			short = i == w.t.perP && w.t.perP != 0 || upto != noUpto
		case word == markBarrier:
			seq, prev := barrierOf(sl.Time)
			if seq > limit {
				break // taken after what is being drained for
			}
			k := uint64(1)
			lim := uint64(noUpto)
			limRing := -1
			// Written before the barrier, and taken with it: there
			// when the barrier is, if within the lag.
			if all-(tail-start) > 1 && ring.Load(s.At(tail+1)) == markUpto {
				u := uint64(s.At(tail + 1).Time)
				limRing, lim = int(u>>ring.PosBits), u&(1<<ring.PosBits-1)
				k = 2
			}
			if !w.resolve(i, seq, prev, limRing, lim) {
				short = true
				break
			}
			tail += k
			avail -= min(k, avail)
			continue
		case word == markUpto:
			// Only ever after a barrier, which takes it with it.
			tail++
			avail--
			continue
		case word&tracewrite.RawOpMask == tracewrite.RawGoroutineOp && avail >= 3:
			w.goroutine(&w.gbatch, word>>opBits, sl.Time, s.At(tail+1), s.At(tail+2))
			tail += 3
			avail -= 3
			continue
		case word&tracewrite.RawOpMask == tracewrite.RawGoroutineOp:
			// A record cut by the lag.
		case n == len(run) && word >= 1<<opBits:
			continue // the run stopped at the ring's end
		}
		break
	}
	s.Release(tail)
	return int(tail - start), short
}

// resolve drains, for a barrier numbered seq in ring i, the rings not
// being drained already: ring prev, the goroutine's previous, and ring
// limRing, no further than position lim, or, when prev is -1, not known,
// all of them. It reports whether they drained all they had before the
// barrier.
func (w *writer) resolve(i int, seq uint64, prev, limRing int, lim uint64) bool {
	if w.draining == nil {
		w.draining = make([]bool, len(w.t.rings))
	}
	w.draining[i] = true
	done := true
	for k := range w.t.rings {
		switch {
		case k == i, prev >= 0 && k != prev && k != limRing:
		case w.draining[k]:
			// Stopped at a barrier of its own, taken after this one:
			// only a limit past it is out of reach.
			if k == limRing {
				tail, _ := w.t.rings[k].Readable()
				done = done && ring.Reached(tail, lim)
			}
		case k == limRing:
			_, short := w.drainRing(k, 0, seq, lim)
			tail, _ := w.t.rings[k].Readable()
			done = done && !short && ring.Reached(tail, lim)
		default:
			_, short := w.drainRing(k, 0, seq, noUpto)
			done = done && !short
		}
	}
	w.draining[i] = false
	return done
}

// textEvents shows events in the live text view.
func (w *writer) textEvents(run []ring.Slot) {
	for _, sl := range run {
		g, op := sl.Word>>opBits, sl.Word&tracewrite.RawOpMask
		switch op & 3 {
		case 0:
			w.text.enter(g, uint32(op>>2), sl.Time)
		case 1:
			w.text.exit(g, records.ExitKind(op>>2), sl.Time)
		}
	}
}

// goroutine encodes a goroutine's creation record, naming the functions
// at its pcs.
func (w *writer) goroutine(b *tracewrite.Batch, g uint64, ts int64, pb, pc *ring.Slot) {
	parent, gopc, startpc := pb.Word, uintptr(pb.Time), uintptr(pc.Time)
	gr := records.Goroutine{ID: g, Parent: parent}
	if gopc != 0 {
		// gopc is the return address of the go statement's call of
		// the runtime: the instruction before it is the statement's,
		// as the runtime's own "created by" line takes it.
		s := w.site(gopc - 1)
		gr.CreatorFunc, gr.CreatorLine = s.fn, s.line
	}
	if startpc != 0 {
		gr.StartFunc = w.site(startpc).fn
	}
	if w.flight != nil {
		// Kept for snapshots whose window begins after the record:
		// the segment dropped with it.
		w.flight.goroutine(gr, ts)
	} else {
		w.totals.Goroutine(g, ts)
	}
	b.Goroutine(gr, ts)
}

// pcSite is what a pc means for a goroutine record.
type pcSite struct {
	fn   uint32
	line int
}

// site names pc, once per pc: programs start goroutines by the thousand
// from a handful of go statements.
func (w *writer) site(pc uintptr) pcSite {
	if s, ok := w.sites[pc]; ok {
		return s
	}
	s := pcSite{fn: w.t.reg.forPC(pc)}
	if f := runtime.FuncForPC(pc); f != nil {
		_, s.line = f.FileLine(pc)
	}
	if len(w.sites) > 1<<16 {
		clear(w.sites) // bound the memory of a program with endless code
	}
	w.sites[pc] = s
	return s
}

// write puts everything drained so far in the file: new functions, a clock
// point, the events and the counters.
func (w *writer) write() {
	if w.flight != nil {
		w.writeFlight()
		return
	}
	first, fs := w.t.reg.unwritten()
	w.enc.Funcs(first, fs)
	efirst, es := w.t.errs.unwritten()
	w.enc.Errors(efirst, es)
	w.enc.Spans(w.t.spans.unwritten())
	for _, c := range unwrittenCoverage() {
		w.enc.Coverage(c)
	}
	now, ns := clock.Now(), clock.Nanotime()-w.startNs
	w.enc.Clock(now, ns)
	w.totals.Clock(now, ns) // the events drained since the last write follow it
	w.totals.Fold()
	// Goroutine records go before the events of the cycle, so that a
	// reader knows of a goroutine's parent before it reads the parent's
	// events of the cycle, whatever the order of the rings.
	w.enc.Events(&w.gbatch)
	w.calls.Add(uint64(w.batch.Enters()))
	w.enc.Events(&w.batch)
	w.flushes++
	w.enc.Stats(w.stats())
	w.flushFile()
	if w.text != nil {
		w.text.flush()
	}
}

func (w *writer) stats() records.Stats {
	st := w.t.ringStats()
	st.Calls, st.Flushes = w.calls.Load(), w.flushes
	w.t.spans.mu.Lock()
	st.LostSpans = w.t.spans.lost
	w.t.spans.mu.Unlock()
	return st
}

// ringStats sums the counters the program's goroutines keep in the rings.
func (t *tracer) ringStats() records.Stats {
	var st records.Stats
	for i := range t.rings {
		s := &t.rings[i]
		st.DroppedCalls += s.Dropped.Load()
		st.Waits += s.Waits.Load()
		st.HeldNs += s.Held.Load()
		st.LostErrors += s.LostErrors.Load()
	}
	return st
}

func (w *writer) flushFile() {
	w.enc.Flush() // errors are kept by w.out
}

// textView prints the seed's indented view of calls as they are drained.
// Lines of different goroutines interleave in the order the writer meets
// them; "calltrail replay" groups them per goroutine.
type textView struct {
	w      *bufio.Writer
	c      io.Closer // nil for stderr
	reg    *registry
	nsPer  float64 // nanoseconds per trace unit, approximately
	stacks map[uint64][]textFrame
	line   []byte
}

type textFrame struct {
	id    uint32
	start int64
}

func (v *textView) enter(g uint64, id uint32, ts int64) {
	st := append(v.stacks[g], textFrame{id, ts})
	v.stacks[g] = st
	v.line = indented.AppendEnter(v.line[:0], g, len(st), v.reg.name(id))
	v.w.Write(v.line)
}

func (v *textView) exit(g uint64, k records.ExitKind, ts int64) {
	st := v.stacks[g]
	if len(st) == 0 {
		return
	}
	f := st[len(st)-1]
	note := ""
	if k != records.Return {
		note = k.String()
	}
	d := time.Duration(float64(ts-f.start) * v.nsPer)
	v.line = indented.AppendExit(v.line[:0], g, len(st), v.reg.name(f.id), d, note)
	v.w.Write(v.line)
	if len(st) == 1 {
		delete(v.stacks, g)
	} else {
		v.stacks[g] = st[:len(st)-1]
	}
}

func (v *textView) flush() {
	v.w.Flush()
}

func (v *textView) close() {
	v.w.Flush()
	if v.c != nil {
		v.c.Close()
	}
}
