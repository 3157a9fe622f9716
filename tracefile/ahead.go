package tracefile

import (
	"encoding/binary"
	"errors"
	"sync"

	"github.com/calltrail/calltrail/internal/gtable"
	"github.com/calltrail/calltrail/internal/wire"
)

// errStopped is what Read returns after StopReadAhead.
var errStopped = errors.New("reading ahead was stopped")

// ReadAhead makes the reader decode on a goroutine of its own from now on,
// some thousands of events ahead of Read: a caller that reads every event
// of a large trace then works on one core while the decoding takes
// another. What Read gives is the same, event for event and error for
// error.
//
// While events are being read, Func, Error and Goroutine may be called
// as before, and answer as they would have; Span and HasSpans may be
// called, but answer from the span table as far as the decoding has got.
// What else the reader tells (Stats, Calls, MaxTime, End, Offset,
// Profiles, Coverage, KeepsSpan...) is for once Read has returned an
// error, io.EOF at the end. A reader not read to its end is stopped with
// StopReadAhead (File.Close does it), or its goroutine waits for ever.
//
// It gains where the caller's work on each event is about the decoding's:
// on a 2-core VM, calltrail report took 4.6 times a bare scan of a
// trace's bytes instead of 6.0, for about 1.6 times the CPU time. Since
// the decoding packs runs of one goroutine's usual enters and exits in
// one loop (packRun), and the caller takes them as Calls (ReadCall), it
// gains even where the caller does next to nothing with each event:
// info --scan over fib(35)'s trace, 1.87-2.43 s, then 0.79-1.05 s.
func (rd *Reader) ReadAhead() {
	if rd.ahead != nil {
		return
	}
	a := &ahead{full: make(chan *batch, 2), free: make(chan *batch, 4), quit: make(chan struct{}), done: make(chan struct{})}
	rd.ahead = a
	go rd.decodeAhead(a)
}

// StopReadAhead ends the goroutine ReadAhead started, once it has
// decoded the batch under way (over an input whose reads block, as long
// as they do). Read then gives the events it had been handed, then an
// error; the rest of what the reader tells may be read. It does nothing
// to a reader not reading ahead.
func (rd *Reader) StopReadAhead() {
	a := rd.ahead
	if a == nil || a.stopped {
		return
	}
	a.stopped = true
	close(a.quit)
	<-a.done
}

// ahead is what a reader reading ahead shares between its goroutine and
// Read's.
type ahead struct {
	// mu guards what Read's side may ask for while the decoding goes on:
	// the tables of functions, errors and spans. The decoding side holds
	// it only to change them, which few events do.
	mu sync.Mutex

	full    chan *batch // decoded, in order
	free    chan *batch // read, for reuse
	quit    chan struct{}
	done    chan struct{}
	stopped bool // StopReadAhead was called (Read's side)

	// Read's side.
	cur   *batch
	words []uint64 // cur's words
	pos   int      // where in words the next event begins
	g     uint64   // goroutine of cur's latest event
	err   error    // what Read returns once the events have all been read
	// gs are the goroutines Read has given the records of: Goroutine
	// answers from them, as the decoding side's run ahead.
	gs gtable.Table[goroutineRecord]
	// funcs and errs are the tables as Func and Error last saw them.
	funcs []Func
	errs  []Error
}

// A batch is events as the decoding side hands them over: enters and
// exits packed into words (24 bytes, 32 at a switch of goroutine, where
// an Event takes 128, which the cores would otherwise pass between
// them), the rest whole.
type batch struct {
	words []uint64
	full  []fullEvent // events that do not pack
	err   error       // the error that follows the events, or nil
}

// fullEvent is an event that does not pack, and the record of its
// goroutine for a GoroutineEvent.
type fullEvent struct {
	ev  Event
	rec goroutineRecord
}

// batchWords is a batch's size, 512 KiB: each hand-over wakes the other
// goroutine, which smaller batches pay for too often (on fib(38), batches
// of 2^12 words took twice as long as 2^16; 2^18 gained nothing more).
// The first batches a reader makes are smaller, from firstBatchWords,
// twice the size each: a trace of a few events is read without making
// and clearing megabytes (FuzzReader's 50,000 inputs in 3.6-4.0 s, not
// 4.1-4.5 s).
const (
	batchWords      = 1 << 16
	firstBatchWords = 1 << 10
)

// A packed event is three words, its first, its time and its start (0
// for an enter), and more for what most events lack: the usual enter and
// exit are the same size, and Read takes them with no branch on which.
// The first holds the kind (3 bits), the exit kind (3), the flags (6),
// the depth (20) and the function (32).
const (
	packFull   = 1 << iota // the next word is an index in the batch's full events (two words in all)
	packG                  // a word with the goroutine follows: it differs from the event before
	packErr                // a word with Err follows
	packHeld               // a word with Held follows
	packSpan               // a word with Span follows
	packSwitch             // no event: the word after it is the goroutine of the events that follow

	maxPackedDepth = 1<<20 - 1
)

// lock and unlock hold the tables reading ahead shares, when it does.
func (rd *Reader) lock() {
	if rd.ahead != nil {
		rd.ahead.mu.Lock()
	}
}

func (rd *Reader) unlock() {
	if rd.ahead != nil {
		rd.ahead.mu.Unlock()
	}
}

// decodeAhead is the reading-ahead goroutine: it decodes batches of
// events until an error, io.EOF included, and hands each over.
func (rd *Reader) decodeAhead(a *ahead) {
	defer close(a.done)
	var ev Event
	size := firstBatchWords // of the next batch made
	for {
		var b *batch
		select {
		case b = <-a.free:
		default:
		}
		if b == nil || cap(b.words) < size {
			// A small batch read is dropped, not used again: batches
			// kept small for good took a large trace half as long again.
			b = &batch{words: make([]uint64, 0, size)}
			size = min(2*size, batchWords)
		} else {
			b.words, b.full, b.err = b.words[:0], b.full[:0], nil
		}
		var g uint64
		for {
			if g = rd.packRun(b, g); len(b.words) >= cap(b.words)-8 {
				break
			}
			if rd.left > 0 && rd.switchOp() {
				continue // the run goes on in another goroutine
			}
			if err := rd.next(&ev); err != nil {
				b.err = err
				break
			}
			g = rd.pack(b, &ev, g)
		}
		last := b.err != nil // b is Read's once handed over
		select {
		case a.full <- b:
		case <-a.quit:
			return
		}
		if last {
			return
		}
	}
}

// packHead makes the first word of a packed event.
func packHead(kind EventKind, exit ExitKind, flags uint64, depth int, fn uint32) uint64 {
	return uint64(kind) | uint64(exit)<<3 | flags<<6 | uint64(depth)<<12 | uint64(fn)<<32
}

// packRun decodes the ops that come next straight into b for as long as
// they are enters and exits of the usual kind (both varints short, no
// error, no wait for the writer, no span to follow), which most are, and
// b has room: it skips the Event that next and pack pass each through.
// The first other op it leaves, having changed nothing for it, to them.
// g is the goroutine of the event before them in b, as for pack, and it
// returns the goroutine of the last event in b.
//
// The reader's state is held in locals for the run, written back once at
// its end: loaded and stored at each event, it took a third of the
// decoding side's time.
func (rd *Reader) packRun(b *batch, g uint64) uint64 {
	if rd.left <= 0 || rd.g == 0 || rd.sp != nil {
		return g
	}
	p, left, last, maxTime := rd.ev, rd.left, rd.last, rd.maxTime
	t0, ns0, rate, from := rd.t0, rd.ns0, rd.rate, rd.from
	st, nfuncs := *rd.cur, uint64(len(rd.funcs))
	words, w := b.words[:cap(b.words)], len(b.words)
	depth0 := len(st)
	// As many events as there are and b has room for, after a switch.
	room := min(left, (len(words)-w-2)/3)
	if room <= 0 {
		return g
	}
	if rd.g != g {
		words[w], words[w+1] = packSwitch<<6, rd.g
		w += 2
	}
	// No call in the loop: every call spills the locals. So smallCall is
	// written out here, and a stack with no room left ends the run
	// rather than grow.
	i, k := 0, 0
	for ; k < room && i <= len(p)-4; k++ {
		q := p[i : i+4]
		v, n := uint64(q[0]), 1
		if v >= 0x80 {
			if q[1] >= 0x80 {
				break
			}
			v, n = v&0x7f|uint64(q[1])<<7, 2
		}
		if v&2 != 0 { // neither wire.OpEnter nor wire.OpExit
			break
		}
		dt := uint64(q[n])
		if dt >= 0x80 {
			if q[n+1] >= 0x80 {
				break
			}
			dt, n = dt&0x7f|uint64(q[n+1])<<7, n+1
		}
		n++
		l := last + (int64(dt>>1) ^ -int64(dt&1))
		ns := wire.Nanos(t0, ns0, rate, l)
		if !(ns <= MaxNanos) { // beyond, or NaN: nanos and apply say
			break
		}
		t := int64(0)
		if ns > 0 {
			t = int64(ns)
		}
		depth := len(st)
		if depth > 0 {
			t = max(t, st[depth-1].last) // as nested
		}
		if v&3 == wire.OpEnter {
			fn := v >> 2
			if fn == 0 || fn >= nfuncs || depth+1 > maxPackedDepth || depth == cap(st) {
				break
			}
			// As push, field by field into the slot.
			st = st[:depth+1]
			f := &st[depth]
			f.fn, f.err, f.start, f.last, f.held = uint32(fn), 0, max(t, from), t, 0
			words[w], words[w+1], words[w+2] = packHead(EnterEvent, 0, 0, depth+1, uint32(fn)), uint64(t), 0
		} else {
			k := ExitKind(v >> 2)
			if k > Goexit || depth == 0 || depth > maxPackedDepth {
				break
			}
			top := &st[depth-1]
			if top.err != 0 || min(top.held, t-top.start) != 0 {
				break
			}
			// As pop, of a call with no error and no time held.
			start := min(top.start, t)
			st = st[:depth-1]
			if depth > 1 {
				st[depth-2].last = t
			}
			words[w], words[w+1], words[w+2] = packHead(ExitEvent, k, 0, depth, top.fn), uint64(t), uint64(start)
		}
		w += 3
		i, last, maxTime = i+n, l, max(maxTime, t)
	}
	if k == 0 {
		return g // nothing packed: the switch, if any, is not kept
	}
	// Each enter deepens the stack by one, each exit makes it shallower:
	// so many of the events were enters.
	rd.calls += uint64(k+len(st)-depth0) / 2
	rd.ev, rd.left, rd.last, rd.maxTime = p[i:], left-k, last, maxTime
	*rd.cur, b.words = st, words[:w]
	return rd.g
}

// pack appends ev to b, g being the goroutine of the event before it in
// b (0 for none), and returns ev's.
func (rd *Reader) pack(b *batch, ev *Event, g uint64) uint64 {
	if ev.Kind != EnterEvent && ev.Kind != ExitEvent || ev.Value.Kind != 0 || ev.Depth < 0 || ev.Depth > maxPackedDepth {
		b.words = append(b.words, packFull<<6, uint64(len(b.full)))
		b.full = append(b.full, fullEvent{ev: *ev})
		if ev.Kind == GoroutineEvent {
			b.full[len(b.full)-1].rec = rd.rec
		}
		return 0 // the next packed event says its goroutine
	}
	var flags uint64
	if ev.G != g {
		flags |= packG
	}
	if ev.Err != 0 {
		flags |= packErr
	}
	if ev.Held != 0 {
		flags |= packHeld
	}
	if ev.Span.IsValid() {
		flags |= packSpan
	}
	b.words = append(b.words, packHead(ev.Kind, ev.Exit, flags, ev.Depth, ev.Func), uint64(ev.Time), uint64(ev.Start))
	if flags == 0 {
		return ev.G
	}
	if flags&packG != 0 {
		b.words = append(b.words, ev.G)
	}
	if flags&packErr != 0 {
		b.words = append(b.words, uint64(ev.Err))
	}
	if flags&packHeld != 0 {
		b.words = append(b.words, uint64(ev.Held))
	}
	if flags&packSpan != 0 {
		b.words = append(b.words, binary.LittleEndian.Uint64(ev.Span[:]))
	}
	return ev.G
}

// unpack sets ev from c, the fields a Call lacks zero. Field by field,
// as the decoder writes them (see apply).
func (c Call) unpack(ev *Event) {
	ev.Kind, ev.Exit, ev.Depth, ev.Func, ev.G = c.Kind(), c.Exit(), c.Depth(), c.Func(), c.G
	ev.Time, ev.Start, ev.Err, ev.Held, ev.Span = c.Time, c.Start, 0, 0, SpanID{}
	if ev.Value.Kind != 0 {
		ev.Value = Value{}
	}
}

// readSlow is Read, reading ahead, for what its fast path leaves: events
// that do not pack, those with more words, those at a batch's end, and
// the next batch.
func (a *ahead) readSlow(ev *Event) error {
	for a.pos >= len(a.words) {
		if a.cur != nil {
			if a.cur.err != nil {
				a.err = a.cur.err
			}
			select {
			case a.free <- a.cur:
			default:
			}
			a.cur = nil
		}
		if a.err != nil || a.stopped {
			*ev = Event{}
			if a.err == nil {
				a.err = errStopped
			}
			return a.err
		}
		a.cur, a.g = <-a.full, 0
		a.words, a.pos = a.cur.words, 0
	}
	w := a.words[a.pos:]
	flags := w[0] >> 6 & 0x3f
	if flags&packSwitch != 0 {
		a.g = w[1]
		a.pos += 2 // an event follows
		return a.readSlow(ev)
	}
	if flags&packFull != 0 {
		f := &a.cur.full[w[1]]
		*ev = f.ev
		if ev.Kind == GoroutineEvent {
			rec, _ := a.gs.Put(ev.G)
			*rec = f.rec
		}
		a.pos += 2
		a.g = 0
		return nil
	}
	Call{w[0], int64(w[1]), int64(w[2]), 0}.unpack(ev) // its goroutine below
	i := 3
	if flags&packG != 0 {
		a.g = w[i]
		i++
	}
	ev.G = a.g
	if flags&packErr != 0 {
		ev.Err = uint32(w[i])
		i++
	}
	if flags&packHeld != 0 {
		ev.Held = int64(w[i])
		i++
	}
	if flags&packSpan != 0 {
		binary.LittleEndian.PutUint64(ev.Span[:], w[i])
		i++
	}
	a.pos += i
	return nil
}
