package tracefile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/calltrail/calltrail/internal/gtable"
	"github.com/calltrail/calltrail/internal/wire"
)

// Event is one thing that happened in the traced program. Times are
// nanoseconds since the trace started.
type Event struct {
	Kind  EventKind
	G     uint64 // goroutine
	Func  uint32 // function id (enter and exit events); see Reader.Func
	Time  int64
	Depth int // nesting of the call among the goroutine's traced calls, 1 for the outermost

	// For exit events only.
	Exit ExitKind
	// Start is when the call began or, for a call open when a flight
	// recorder's snapshot window began, the window's start: what the
	// call did before it, its callees, is not in the trace, so no figure
	// counts that time, as its own or as theirs. The call's enter event
	// keeps its true time.
	Start int64
	Err   uint32 // the error the call returned, an id of the error table (see Reader.Error); 0 for none
	// Held is the time within the call that its goroutine waited for
	// the trace writer, its ring full: tracing's time, not the call's.
	Held int64

	// For value events only: arguments come after their call's enter,
	// results before its exit.
	Value Value

	// Span is, for a span event, its span; for a call's events, the span
	// the call ran under: the innermost open on its goroutine when it
	// began or, in a goroutine that had none open, the span the goroutine
	// was started under, when the reader was told (Reader.InheritSpans).
	// It is zero for a call outside any span.
	Span SpanID
}

// Duration is the time of the call ended by an exit event: its wall time
// less the time its goroutine was held up by the trace writer (Held).
func (e *Event) Duration() time.Duration { return time.Duration(e.Time - e.Start - e.Held) }

type frame struct {
	fn    uint32
	err   uint32
	start int64
	last  int64 // the latest time inside the call: its start, or its last callee's exit
	held  int64 // time inside the call held up by the trace writer, its callees' included
}

// Reader decodes a trace file as a stream of events.
type Reader struct {
	r   *bufio.Reader
	off int64 // bytes consumed so far

	version  int
	meta     Meta
	funcs    []Func  // index is the function id; id 0 is unused
	errs     []Error // index is the error id; id 0 is unused; it names the types of values too
	coverage []Coverage
	gs       gtable.Table[goroutineRecord]
	rec      goroutineRecord           // the latest goroutine record decoded
	strs     map[uint64]*pendingString // by goroutine: a string value whose bytes are being read
	stats    Stats
	pprofs   map[string][]byte
	end      string
	ended    bool // the last chunk read was an end chunk
	chunks   int

	// Clock calibration: first and latest points.
	t0, ns0, tl, nsl int64
	clocks           int
	rate             float64 // nanoseconds per tick

	// The events chunk being decoded.
	buf     []byte
	ev      []byte
	left    int // events still to decode in ev
	g       uint64
	last    int64
	maxTime int64
	// from is the earliest time a call counts from (Event.Start): a
	// snapshot's window start, math.MinInt64 for a whole run.
	from int64
	// heldFrom is when the wait for the writer whose end comes next began.
	heldFrom int64

	// stacks holds the open calls of goroutines with any, and of some
	// without: those are swept out when it grows past sweepAt, rather
	// than at each switch from a goroutine whose calls have all ended,
	// which programs of short calls in a few goroutines do all the time.
	// The ids are dense: a table of them is looked up at every switch
	// for a fraction of a map's cost.
	stacks  gtable.Table[*[]frame]
	sweepAt int
	cur     *[]frame   // stacks[g], kept between goroutine switches
	free    []*[]frame // empty stacks to reuse
	calls   uint64

	// sp ties calls to spans: nil until the trace names a span or the
	// reader is asked to select calls by span.
	sp *spanState

	// After the input ends: synthetic exits for calls still open, then err.
	done    bool
	pending []Event
	err     error

	ahead *ahead // reading ahead, on a goroutine of the reader's own (ReadAhead)
}

// bufferSize is the size of the buffer NewReader reads r through: 64
// KiB, or the length of an input in memory (bytes.Reader, strings.Reader)
// where that is smaller. A trace of a few events is then read without
// making and clearing the rest (an eighth of the time of reading each
// input three ways, as FuzzReader does; for a file, which says its size
// only through a system call, the verbs over small traces of FuzzViews
// ran no faster).
func bufferSize(r io.Reader) int {
	if l, ok := r.(interface{ Len() int }); ok {
		return min(64<<10, l.Len()) // bufio makes it at least 16 bytes
	}
	return 64 << 10
}

// NewReader reads the header and metadata of a trace. The events are read
// by calling Next.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{
		r:     bufio.NewReaderSize(r, bufferSize(r)),
		funcs: []Func{{}},
		errs:  []Error{{}},
		rate:  1,
		from:  math.MinInt64,
	}
	var magic [len(Magic)]byte
	n, err := io.ReadFull(rd.r, magic[:])
	rd.off += int64(n)
	switch {
	case n == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF):
		return nil, ErrEmpty
	case err == io.ErrUnexpectedEOF || err == nil && string(magic[:]) != Magic:
		if string(magic[:n]) == Magic[:n] && err != nil {
			return nil, fmt.Errorf("%w: header cut after %d bytes", ErrTruncated, n)
		}
		return nil, ErrNotTrace
	case err != nil:
		return nil, err
	}
	v, err := binary.ReadUvarint(rd.r)
	if err != nil {
		return nil, fmt.Errorf("%w: header cut in its version", ErrTruncated)
	}
	rd.off += int64(uvarintLen(v))
	if v == 0 {
		return nil, fmt.Errorf("%w: format version 0", ErrCorrupt)
	}
	if v > Version {
		return nil, fmt.Errorf("trace format version %d is newer than this calltrail reads (%d): update calltrail", v, Version)
	}
	rd.version = int(v)
	typ, p, err := rd.chunk()
	if err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("%w: no metadata", ErrTruncated)
		}
		return nil, err
	}
	if typ != wire.ChunkMeta {
		return nil, fmt.Errorf("%w: first chunk is %q, not metadata", ErrCorrupt, typ)
	}
	if err := rd.readMeta(p); err != nil {
		return nil, err
	}
	return rd, nil
}

func uvarintLen(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], v)
}

// chunk reads the next chunk. It returns io.EOF at a clean end of input
// and an error wrapping ErrTruncated when the input ends inside a chunk.
func (rd *Reader) chunk() (byte, []byte, error) {
	start := rd.off
	typ, err := rd.r.ReadByte()
	if err == io.EOF {
		return 0, nil, io.EOF
	}
	if err != nil {
		return 0, nil, err
	}
	rd.off++
	n, err := binary.ReadUvarint(rd.r)
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return 0, nil, rd.truncated(start)
		}
		return 0, nil, fmt.Errorf("%w: bad chunk length at byte %d", ErrCorrupt, start)
	}
	rd.off += int64(uvarintLen(n))
	if n > wire.MaxChunk {
		return 0, nil, fmt.Errorf("%w: chunk of %d bytes at byte %d", ErrCorrupt, n, start)
	}
	// Grow the buffer as bytes arrive rather than trusting the length, so
	// that a short corrupt input cannot make us allocate much.
	rd.buf = rd.buf[:0]
	for need := int(n); need > 0; {
		step := min(need, 1<<20)
		l := len(rd.buf)
		rd.buf = append(rd.buf, make([]byte, step)...)
		m, err := io.ReadFull(rd.r, rd.buf[l:])
		rd.off += int64(m)
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return 0, nil, rd.truncated(start)
			}
			return 0, nil, err
		}
		need -= step
	}
	var sum [4]byte
	m, err := io.ReadFull(rd.r, sum[:])
	rd.off += int64(m)
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return 0, nil, rd.truncated(start)
		}
		return 0, nil, err
	}
	crc := crc32.Update(0, wire.Castagnoli, []byte{typ})
	crc = crc32.Update(crc, wire.Castagnoli, rd.buf)
	if crc != binary.LittleEndian.Uint32(sum[:]) {
		return 0, nil, fmt.Errorf("%w: checksum mismatch in chunk at byte %d", ErrCorrupt, start)
	}
	rd.chunks++
	return typ, rd.buf, nil
}

func (rd *Reader) truncated(at int64) error {
	return fmt.Errorf("%w: file ends inside the chunk at byte %d (read %d whole chunks)", ErrTruncated, at, rd.chunks)
}

// dec decodes fields of a chunk payload, remembering the first error.
type dec struct {
	p   []byte
	err error
}

func (d *dec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.err = fmt.Errorf("%w: bad varint", ErrCorrupt)
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *dec) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.p)
	if n <= 0 {
		d.err = fmt.Errorf("%w: bad varint", ErrCorrupt)
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *dec) string() string { return Printable(d.raw()) }

// raw decodes a string as it was written: an error's message, which is
// shown quoted wherever it is shown.
func (d *dec) raw() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.p)) {
		d.err = fmt.Errorf("%w: string runs past its chunk", ErrCorrupt)
		return ""
	}
	s := string(d.p[:n])
	d.p = d.p[n:]
	return s
}

// Printable returns s with what a terminal or an XML document would take
// for something else written as Go escapes: control characters (\x1b,
// NUL, newlines) and bytes that are not UTF-8. Go's names never hold
// them; a crafted trace, or a store anyone can push to, may. Every name,
// file, error type and metadata value a Reader gives has been through
// it. An error's message has not: a program's messages hold newlines and
// tabs, which Error.String and a JSON encoding quote, and which escaped
// here and quoted again would read as backslashes.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || r < 0x20 || r >= 0x7f && r < 0xa0 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r >= 0x7f && r < 0xa0:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func (d *dec) finish(what string) error {
	if d.err == nil && len(d.p) != 0 {
		d.err = fmt.Errorf("%w: %d stray bytes after %s", ErrCorrupt, len(d.p), what)
	}
	return d.err
}

func (rd *Reader) readMeta(p []byte) error {
	d := dec{p: p}
	n := d.uvarint()
	if n > uint64(len(p)) {
		return fmt.Errorf("%w: metadata count", ErrCorrupt)
	}
	kv := make(map[string]string, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		k := d.string()
		kv[k] = d.string()
	}
	rd.meta = parseMeta(kv)
	if rd.meta.Snapshot() {
		rd.from = int64(rd.meta.Window.Start)
	}
	return d.finish("metadata")
}

// Next returns the next event. At the end of the input it first returns an
// Unfinished exit for every call still open (innermost first, goroutines
// in order of id), then io.EOF, or the error that stopped reading: one
// wrapping ErrTruncated for a file cut short, ErrCorrupt for damage.
func (rd *Reader) Next() (Event, error) {
	var ev Event
	err := rd.Read(&ev)
	return ev, err
}

// Read is Next, reading the event into *ev: a reader of every event of a
// large trace spends much of its time copying the Events Next returns.
// On an error, *ev is the zero Event.
func (rd *Reader) Read(ev *Event) error {
	// The usual enter or exit first, in as few steps as it takes.
	if c, ok := rd.ReadCall(); ok {
		c.unpack(ev)
		return nil
	}
	if a := rd.ahead; a != nil {
		return a.readSlow(ev)
	}
	return rd.next(ev)
}

// A Call is an enter or an exit as ReadCall gives it: of the usual kind,
// with no error, no time held up by the trace writer and no span. Its
// other fields are those of its Event.
type Call struct {
	head        uint64 // as packed: kind, exit kind, depth, function
	Time, Start int64
	G           uint64
}

// Kind returns EnterEvent or ExitEvent.
func (c Call) Kind() EventKind { return EventKind(c.head & 7) }

// Exit returns how the call ended (for an exit).
func (c Call) Exit() ExitKind { return ExitKind(c.head >> 3 & 7) }

// Depth returns the call's nesting, as Event.Depth.
func (c Call) Depth() int { return int(c.head >> 12 & maxPackedDepth) }

// Func returns the called function's id.
func (c Call) Func() uint32 { return uint32(c.head >> 32) }

// ReadCall reads the next event if it is a Call, reading ahead (see
// ReadAhead), and reports whether it did; if not, it reads nothing, and
// Read gives the next event. A caller that works on every event can take
// most of them so, in a few instructions its compiler inlines, and leave
// the rest to Read: what it reads in all is what Read alone would give.
func (rd *Reader) ReadCall() (Call, bool) {
	if a := rd.ahead; a != nil {
		// An index, not a slice, moves on: a slice's store would be
		// three words and a write barrier's check.
		if i := a.pos; i+3 <= len(a.words) {
			if w := a.words[i : i+3]; w[0]>>6&0x3f == 0 {
				a.pos = i + 3
				return Call{w[0], int64(w[1]), int64(w[2]), a.g}, true
			}
		}
	}
	return Call{}, false
}

// next decodes the next event into *ev: Read's work, on the caller's
// goroutine or, reading ahead, on the reader's own.
func (rd *Reader) next(ev *Event) error {
	for {
		if rd.left > 0 {
			ok, err := rd.decodeOne(ev)
			if err != nil {
				rd.fail(err)
				continue
			}
			if ok {
				return nil
			}
			continue
		}
		if rd.done {
			if len(rd.pending) > 0 {
				*ev = rd.pending[0]
				rd.pending = rd.pending[1:]
				return nil
			}
			*ev = Event{}
			return rd.err
		}
		if len(rd.ev) != 0 {
			rd.fail(fmt.Errorf("%w: %d stray bytes after the events of a chunk", ErrCorrupt, len(rd.ev)))
			continue
		}
		typ, p, err := rd.chunk()
		if err != nil {
			rd.fail(err)
			continue
		}
		rd.lock()
		err = rd.handle(typ, p)
		rd.unlock()
		if err != nil {
			rd.fail(err)
		}
	}
}

// fail ends the stream: the open calls are closed as unfinished and err is
// returned after them.
func (rd *Reader) fail(err error) {
	rd.done = true
	rd.err = err
	rd.left = 0
	rd.ev = nil
	ids := make([]uint64, 0, rd.stacks.Len())
	rd.stacks.Range(func(g uint64, st **[]frame) bool {
		if len(**st) > 0 {
			ids = append(ids, g)
		}
		return true
	})
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, g := range ids {
		st := **rd.stacks.Get(g)
		var held int64 // the callees', as their exits would have added it
		for i := len(st) - 1; i >= 0; i-- {
			end := max(rd.maxTime, st[i].start)
			held = min(held+st[i].held, end-st[i].start)
			e := Event{Kind: ExitEvent, G: g, Func: st[i].fn, Time: end, Depth: i + 1, Exit: Unfinished, Start: st[i].start, Held: held}
			if rd.sp == nil || rd.sp.exit(g, &e) {
				rd.pending = append(rd.pending, e)
			}
		}
	}
	rd.stacks, rd.cur = gtable.Table[*[]frame]{}, nil
}

func (rd *Reader) handle(typ byte, p []byte) error {
	if typ == wire.ChunkSummary {
		// It repeats what the chunks before it said: nothing to do,
		// and the trace still ends with the end chunk before it.
		return nil
	}
	rd.ended = false
	d := dec{p: p}
	switch typ {
	case wire.ChunkMeta:
		return fmt.Errorf("%w: second metadata chunk", ErrCorrupt)
	case wire.ChunkFuncs:
		first := d.uvarint()
		n := d.uvarint()
		if d.err == nil && (first != uint64(len(rd.funcs)) || n > uint64(len(p)) || first+n > wire.MaxFuncID) {
			return fmt.Errorf("%w: function table out of order", ErrCorrupt)
		}
		for i := uint64(0); i < n && d.err == nil; i++ {
			f := Func{Name: d.string(), File: d.string()}
			f.Line = int(d.uvarint() & (1<<31 - 1))
			rd.funcs = append(rd.funcs, f)
		}
		return d.finish("function table")
	case wire.ChunkSpans:
		return rd.spans().readTable(&d)
	case wire.ChunkErrors:
		first := d.uvarint()
		n := d.uvarint()
		if d.err == nil && (first != uint64(len(rd.errs)) || n > uint64(len(p)) || first+n > MaxErrorID+1) {
			return fmt.Errorf("%w: error table out of order", ErrCorrupt)
		}
		for i := uint64(0); i < n && d.err == nil; i++ {
			rd.errs = append(rd.errs, Error{Type: d.string(), Message: d.raw()})
		}
		return d.finish("error table")
	case wire.ChunkClock:
		t, ns := d.varint(), d.varint()
		if err := d.finish("clock"); err != nil {
			return err
		}
		if rd.clocks == 0 {
			rd.t0, rd.ns0 = t, ns
		}
		rd.tl, rd.nsl = t, ns
		rd.clocks++
		rd.setRate()
		// The writer puts a clock point in every write, and one as
		// tracing ends: the trace lasts until its latest, though no
		// event came since. A program killed while a call waited
		// has the call open until then, not until the last event.
		if ns >= 0 && ns <= MaxNanos {
			rd.maxTime = max(rd.maxTime, ns)
		}
		return nil
	case wire.ChunkEvents:
		d.uvarint() // shard: not needed to decode
		rd.last = d.varint()
		n := d.uvarint()
		if d.err != nil {
			return d.err
		}
		if n == 0 || n > uint64(len(d.p)) {
			return fmt.Errorf("%w: events chunk claims %d events in %d bytes", ErrCorrupt, n, len(d.p))
		}
		rd.ev, rd.left = d.p, int(n)
		rd.switchTo(0) // each chunk names its first goroutine
		return nil
	case wire.ChunkStats:
		s := Stats{Calls: d.uvarint(), DroppedCalls: d.uvarint(), Flushes: d.uvarint()}
		if len(d.p) > 0 { // written since the runtime waits for room
			s.Waits, s.HeldNs = d.uvarint(), d.uvarint()
		}
		if len(d.p) > 0 { // written when errors or spans were lost
			s.LostErrors = d.uvarint()
		}
		if len(d.p) > 0 { // written when spans were lost
			s.LostSpans = d.uvarint()
		}
		if err := d.finish("stats"); err != nil {
			return err
		}
		rd.stats = s
		return nil
	case wire.ChunkCoverage:
		c, err := readCoverage(&d)
		if err != nil {
			return err
		}
		rd.coverage = append(rd.coverage, c)
		return nil
	case wire.ChunkPprof:
		name := d.string()
		if d.err != nil {
			return d.err
		}
		if rd.pprofs == nil {
			rd.pprofs = map[string][]byte{}
		}
		rd.pprofs[name] = append([]byte(nil), d.p...)
		return nil
	case wire.ChunkEnd:
		reason := d.string()
		d.varint()
		if err := d.finish("end"); err != nil {
			return err
		}
		rd.end, rd.ended = reason, true
		return nil
	}
	return nil // a chunk type from a later minor revision: skip it
}

// setRate sets the rate of the clock from its first and latest points.
func (rd *Reader) setRate() { rd.rate = wire.Rate(rd.t0, rd.ns0, rd.tl, rd.nsl, rd.rate) }

// nanos converts a time in ticks to nanoseconds since the trace started,
// reporting false for one beyond MaxNanos. A time before the start (the
// cores' clocks differ by a few ticks) is the start.
func (rd *Reader) nanos(ticks int64) (int64, bool) {
	ns := wire.Nanos(rd.t0, rd.ns0, rd.rate, ticks)
	switch {
	case ns <= MaxNanos:
		return int64(max(ns, 0)), true
	case ns > MaxNanos:
		return 0, false
	}
	return 0, true // NaN: a clock that makes no sense; read as the start
}

// switchTo makes g the goroutine of the events that follow.
func (rd *Reader) switchTo(g uint64) {
	rd.g, rd.cur = g, nil
	if g == 0 {
		return
	}
	if st := rd.stacks.Get(g); st != nil {
		rd.cur = *st
		return
	}
	if rd.stacks.Len() >= rd.sweepAt {
		rd.sweep()
	}
	if n := len(rd.free); n > 0 {
		rd.cur, rd.free = rd.free[n-1], rd.free[:n-1]
	} else {
		rd.cur = new([]frame)
	}
	st, _ := rd.stacks.Put(g)
	*st = rd.cur
}

// sweep forgets the goroutines without open calls, keeping some of their
// stacks to reuse, and lets stacks grow to twice what is left before the
// next sweep.
func (rd *Reader) sweep() {
	rd.stacks.Range(func(g uint64, st **[]frame) bool {
		if len(**st) == 0 {
			if len(rd.free) < 1024 {
				rd.free = append(rd.free, *st)
			}
			rd.stacks.Delete(g)
		}
		return true
	})
	rd.sweepAt = max(4096, 2*rd.stacks.Len())
}

// held notes a wait for the trace writer: its start, or its end at t.
// The wait is in the innermost call open when it started: the caller of
// a call whose enter waited, the call whose callee's exit did.
func (rd *Reader) held(st []frame, to bool, t int64) {
	if !to {
		rd.heldFrom = t
		return
	}
	from := min(rd.heldFrom, t)
	for i := len(st) - 1; i >= 0; i-- {
		if st[i].start > from {
			continue
		}
		// The wait is between the call's callees, as the times nest
		// (see decodeOne): after the last to end, before the one
		// open, and before the next.
		from = max(from, st[i].last)
		if i+1 < len(st) {
			t = min(t, st[i+1].start)
		} else {
			st[i].last = max(st[i].last, t)
		}
		st[i].held += max(t-from, 0)
		return
	}
}

// decodeOne decodes one op of the current events chunk. ok is false for
// ops that change decoder state without producing an event.
func (rd *Reader) decodeOne(ev *Event) (ok bool, err error) {
	if v, dt, n := smallCall(rd.ev); n > 0 && rd.g != 0 {
		rd.ev = rd.ev[n:]
		return rd.apply(ev, v, dt, nil)
	}
	if rd.switchOp() {
		return false, nil
	}
	d := dec{p: rd.ev}
	v := d.uvarint()
	op := v & 3
	if op == wire.OpSwitch { // one switchOp refused
		return false, fmt.Errorf("%w: bad goroutine switch", ErrCorrupt)
	}
	if rd.g == 0 {
		return false, fmt.Errorf("%w: event before any goroutine", ErrCorrupt)
	}
	dt := d.uvarint()
	if op == wire.OpExt && v>>2 >= wire.ExtValue {
		if d.err != nil {
			return false, d.err
		}
		rd.ev = d.p
		rd.left--
		// The delta carries the value's bits; the next event's delta
		// is from them.
		rd.last += int64(dt>>1) ^ -int64(dt&1)
		return rd.value(ev, v>>2-wire.ExtValue, uint64(rd.last))
	}
	var gr Goroutine
	record := op == wire.OpExt && v>>2 == wire.ExtGoroutine
	if record {
		gr = Goroutine{ID: rd.g, Parent: d.uvarint(), CreatorFunc: uint32(d.uvarint()), CreatorLine: int(d.uvarint() & (1<<31 - 1)), StartFunc: uint32(d.uvarint())}
	}
	if d.err != nil {
		return false, d.err
	}
	rd.ev = d.p
	return rd.apply(ev, v, dt, &gr)
}

// switchOp applies the op the chunk's events go on with if it is a
// goroutine switch, as it is between runs of one goroutine's events, and
// reports whether it did. A damaged one it leaves to decodeOne.
func (rd *Reader) switchOp() bool {
	if len(rd.ev) == 0 || rd.ev[0]&3 != wire.OpSwitch { // v's low bits
		return false
	}
	d := dec{p: rd.ev}
	v := d.uvarint()
	if d.err != nil || v>>2 == 0 {
		return false
	}
	rd.switchTo(v >> 2)
	rd.ev = d.p
	return true
}

// smallCall decodes the enter or exit at the start of p when both its
// varints take one or two bytes, as most events' do, and returns them and
// their length; n is 0 for any other op, left to the general decoder.
func smallCall(p []byte) (v, dt uint64, n int) {
	if len(p) < 4 {
		return 0, 0, 0
	}
	switch {
	case p[0] < 0x80:
		v, n = uint64(p[0]), 1
	case p[1] < 0x80:
		v, n = uint64(p[0]&0x7f)|uint64(p[1])<<7, 2
	default:
		return 0, 0, 0
	}
	if v&3 != wire.OpEnter && v&3 != wire.OpExit {
		return 0, 0, 0
	}
	switch q := p[n:]; {
	case q[0] < 0x80:
		return v, uint64(q[0]), n + 1
	case q[1] < 0x80:
		return v, uint64(q[0]&0x7f) | uint64(q[1])<<7, n + 2
	}
	return 0, 0, 0
}

// push opens a call of fn at t in the current goroutine's stack and
// returns its depth.
func (rd *Reader) push(fn uint32, t int64) int {
	// Field by field into the slot: a frame built aside and copied in
	// is written with small stores and read back with wide loads,
	// which the CPU cannot forward, and stalls on.
	st := rd.cur
	n := len(*st)
	if n == cap(*st) {
		*st = append(*st, frame{})
	}
	*st = (*st)[:n+1]
	f := &(*st)[n]
	f.fn, f.err, f.start, f.last, f.held = fn, 0, max(t, rd.from), t, 0
	rd.calls++
	return n + 1
}

// pop ends at t the current goroutine's innermost call, which there
// must be, and returns its function, error, start and the time it was
// held up (see Event.Held), which its caller is too.
func (rd *Reader) pop(t int64) (fn, err uint32, start, held int64) {
	st := rd.cur
	n := len(*st)
	top := &(*st)[n-1]
	// A call ending before a snapshot's window began, which only a
	// damaged snapshot holds, counts from its end: no time, not less.
	start = min(top.start, t)
	fn, err, held = top.fn, top.err, min(top.held, t-start)
	*st = (*st)[:n-1]
	if n > 1 {
		(*st)[n-2].last = t
		(*st)[n-2].held += held
	}
	return fn, err, start, held
}

// eventTime returns the clock after time delta dt (zigzag) and the time
// it gives the event, in nanoseconds; ok is false for one past MaxNanos.
// It changes nothing.
func (rd *Reader) eventTime(dt uint64) (last, t int64, ok bool) {
	last = rd.last + (int64(dt>>1) ^ -int64(dt&1))
	t, ok = rd.nanos(last)
	return last, t, ok
}

// nested returns a call's enter or exit time t, made no earlier than the
// latest event of the goroutine's innermost open call. Calls nest in time
// as they do in the stack: a goroutine that moved to a CPU whose clock is
// a few ticks behind would otherwise have a callee start before its
// caller, or end after it, and a call spend less than nothing in its own
// code.
func (rd *Reader) nested(t int64) int64 {
	if st := *rd.cur; len(st) > 0 {
		return max(t, st[len(st)-1].last)
	}
	return t
}

// apply applies op v, an enter, an exit or an extended op other than a
// value, with time delta dt (zigzag); gr is the goroutine record of an
// ExtGoroutine op (nil for the rest).
func (rd *Reader) apply(ev *Event, v, dt uint64, gr *Goroutine) (ok bool, err error) {
	op := v & 3
	record := op == wire.OpExt && v>>2 == wire.ExtGoroutine
	rd.left--
	last, t, ok := rd.eventTime(dt)
	if !ok {
		return false, fmt.Errorf("%w: event time beyond %v", ErrCorrupt, time.Duration(MaxNanos))
	}
	rd.last = last
	if op != wire.OpExt {
		t = rd.nested(t)
	}
	st := rd.cur
	rd.maxTime = max(rd.maxTime, t)
	// Field by field: assigning a whole Event, which holds strings,
	// takes a write barrier's check for each of its pointers.
	ev.Kind, ev.G, ev.Func, ev.Time, ev.Depth = 0, rd.g, 0, t, 0
	ev.Exit, ev.Start, ev.Err, ev.Held, ev.Span = 0, 0, 0, 0, SpanID{}
	if ev.Value.Kind != 0 { // only value events set it
		ev.Value = Value{}
	}
	switch op {
	case wire.OpEnter:
		fn := v >> 2
		if fn == 0 || fn >= uint64(len(rd.funcs)) {
			return false, fmt.Errorf("%w: unknown function id %d", ErrCorrupt, fn)
		}
		ev.Kind, ev.Func = EnterEvent, uint32(fn)
		ev.Depth = rd.push(uint32(fn), t)
		if rd.sp != nil {
			return rd.sp.enter(rd.g, ev), nil
		}
	case wire.OpExit:
		k := ExitKind(v >> 2)
		if v>>2 > uint64(Goexit) {
			return false, fmt.Errorf("%w: unknown exit kind %d", ErrCorrupt, v>>2)
		}
		if len(*st) == 0 {
			return false, fmt.Errorf("%w: exit without a call in goroutine %d", ErrCorrupt, rd.g)
		}
		ev.Kind, ev.Exit, ev.Depth = ExitEvent, k, len(*st)
		ev.Func, ev.Err, ev.Start, ev.Held = rd.pop(t)
		if rd.sp != nil {
			return rd.sp.exit(rd.g, ev), nil
		}
	case wire.OpExt:
		switch id := v >> 2; id {
		case wire.ExtHeldFrom, wire.ExtHeldTo:
			rd.held(*st, id == wire.ExtHeldTo, t)
			return false, nil
		case wire.ExtSpanStart, wire.ExtSpanEnd:
			rd.lock()
			rd.spans().pending(rd.g, id == wire.ExtSpanEnd, t)
			rd.unlock()
			return false, nil
		}
		if !record { // an error: of the call about to exit
			id := v >> 2
			if id >= uint64(len(rd.errs)) {
				return false, fmt.Errorf("%w: unknown error id %d", ErrCorrupt, id)
			}
			if len(*st) == 0 {
				return false, fmt.Errorf("%w: an error without a call in goroutine %d", ErrCorrupt, rd.g)
			}
			(*st)[len(*st)-1].err = uint32(id)
			return false, nil
		}
		if uint64(gr.CreatorFunc) >= uint64(len(rd.funcs)) || uint64(gr.StartFunc) >= uint64(len(rd.funcs)) {
			return false, fmt.Errorf("%w: goroutine record names unknown function", ErrCorrupt)
		}
		gr.FirstSeen = t
		rd.rec = goroutineRecord{parent: gr.Parent, firstSeen: t, creatorFunc: gr.CreatorFunc, startFunc: gr.StartFunc, creatorLine: int32(gr.CreatorLine)}
		if rd.ahead == nil {
			// Reading ahead, Read's side keeps the records it is
			// handed (ahead.gs): two tables would hold a trace's
			// millions of goroutines twice.
			rec, _ := rd.gs.Put(gr.ID)
			*rec = rd.rec
		}
		ev.Kind = GoroutineEvent
	}
	return true, nil
}

// value decodes value op x (kind<<1 | result) with its bits: a value
// event, or none while a string's bytes are still to come.
func (rd *Reader) value(ev *Event, x, bits uint64) (bool, error) {
	k, result := ValueKind(x>>1), x&1 == 1
	if k == wire.ValueSpan {
		rd.lock() // it may add to the span table
		defer rd.unlock()
		return rd.spans().id(rd, ev, bits)
	}
	st := rd.cur
	if k == 0 || k >= maxValueKind || len(*st) == 0 {
		return false, fmt.Errorf("%w: bad value op %d in goroutine %d", ErrCorrupt, x, rd.g)
	}
	if rd.strs == nil {
		rd.strs = map[uint64]*pendingString{}
	}
	p := rd.strs[rd.g]
	switch {
	case k == bytesValue:
		if p == nil {
			return false, fmt.Errorf("%w: string bytes without a string in goroutine %d", ErrCorrupt, rd.g)
		}
		for i := 0; i < 8 && len(p.b) < p.want; i++ {
			p.b = append(p.b, byte(bits>>(8*i)))
		}
		if len(p.b) < p.want {
			return false, nil
		}
		delete(rd.strs, rd.g)
		p.v.Str = string(p.b)
		*ev = Event{Kind: ValueEvent, G: rd.g, Func: (*st)[len(*st)-1].fn, Depth: len(*st), Value: p.v}
		return rd.sp == nil || rd.sp.value(rd.g, ev), nil
	case p != nil:
		return false, fmt.Errorf("%w: a string cut short in goroutine %d", ErrCorrupt, rd.g)
	}
	v := Value{Kind: k, Result: result, Bits: bits}
	switch k {
	case StringValue:
		if n := wire.StringBytes(int(min(bits, MaxValueString))); n > 0 {
			rd.strs[rd.g] = &pendingString{v: v, want: n}
			return false, nil
		}
	case TypeValue:
		if bits == 0 || bits >= uint64(len(rd.errs)) {
			return false, fmt.Errorf("%w: unknown type id %d", ErrCorrupt, bits)
		}
		v.Type = rd.errs[bits].Type
	}
	*ev = Event{Kind: ValueEvent, G: rd.g, Func: (*st)[len(*st)-1].fn, Depth: len(*st), Value: v}
	return rd.sp == nil || rd.sp.value(rd.g, ev), nil
}

// pendingString is a string value whose bytes are being read.
type pendingString struct {
	v    Value
	want int
	b    []byte
}

// Meta returns what the runtime wrote of the program: its name, Go
// release, when tracing started and so on.
func (rd *Reader) Meta() Meta { return rd.meta }

// Version returns the format version of the file.
func (rd *Reader) Version() int { return rd.version }

// Func returns the function with the given id. Ids come from events.
func (rd *Reader) Func(id uint32) Func {
	var funcs []Func
	if a := rd.ahead; a != nil {
		funcs = seen(rd, id, &a.funcs, &rd.funcs)
	} else {
		funcs = rd.funcs
	}
	if int(id) < len(funcs) {
		return funcs[id]
	}
	return Func{Name: fmt.Sprintf("func#%d", id)}
}

// Error returns the error with the given id. Ids come from exit events.
func (rd *Reader) Error(id uint32) Error {
	var errs []Error
	if a := rd.ahead; a != nil {
		errs = seen(rd, id, &a.errs, &rd.errs)
	} else {
		errs = rd.errs
	}
	if int(id) < len(errs) {
		return errs[id]
	}
	return Error{Type: fmt.Sprintf("error#%d", id)}
}

// seen returns a table of rd's as Read's side has last seen it while
// reading ahead, first looking again, under the lock, if it did not hold
// id. The tables only grow, at their ends, so what was seen stays true:
// some callers ask for a function at every event, and a lock each time
// cost replay a tenth of its time.
func seen[T any](rd *Reader, id uint32, last, table *[]T) []T {
	if int(id) >= len(*last) {
		rd.lock()
		*last = *table
		rd.unlock()
	}
	return *last
}

// NumErrors reports how many errors the error table holds so far; their
// ids are 1 to NumErrors.
func (rd *Reader) NumErrors() int { return max(len(rd.errs)-1, 0) }

// NumFuncs reports how many functions have been defined so far; their ids
// are 1 to NumFuncs.
func (rd *Reader) NumFuncs() int { return len(rd.funcs) - 1 }

// Goroutine returns what is known of goroutine id, and whether anything is.
func (rd *Reader) Goroutine(id uint64) (Goroutine, bool) {
	gs := &rd.gs
	if rd.ahead != nil {
		gs = &rd.ahead.gs // as far as Read has got
	}
	g := gs.Get(id)
	if g == nil {
		return Goroutine{ID: id}, false
	}
	return Goroutine{ID: id, Parent: g.parent, CreatorFunc: g.creatorFunc, CreatorLine: int(g.creatorLine), StartFunc: g.startFunc, FirstSeen: g.firstSeen}, true
}

// goroutineRecord is a Goroutine as the reader keeps it, by id: 32
// bytes, as a trace of ten million goroutines holds ten million.
type goroutineRecord struct {
	parent                 uint64
	firstSeen              int64
	creatorFunc, startFunc uint32
	creatorLine            int32
}

// Profiles returns the profiles of the Go runtime read so far, by name
// ("cpu", "mutex", "block"), each a gzipped profile.proto. The runtime
// writes them when tracing ends.
func (rd *Reader) Profiles() map[string][]byte { return rd.pprofs }

// Stats returns the latest counters read.
func (rd *Reader) Stats() Stats { return rd.stats }

// End returns the reason tracing ended and whether the trace ended with an
// end chunk at all; a trace without one comes from a program that was
// killed, or that is still running.
func (rd *Reader) End() (reason string, ok bool) { return rd.end, rd.ended }

// Offset reports how many bytes of the input have been consumed.
func (rd *Reader) Offset() int64 { return rd.off }

// Calls reports how many calls (enter events) have been read so far.
func (rd *Reader) Calls() uint64 { return rd.calls }

// MaxTime reports the latest time read so far: of an event, or of a
// clock point, which the writer puts in every write and as tracing ends.
func (rd *Reader) MaxTime() int64 { return rd.maxTime }

// IsIncomplete reports whether err says the trace was cut short or damaged
// after some events could be read, as opposed to not being readable at all.
func IsIncomplete(err error) bool {
	return errors.Is(err, ErrTruncated) || errors.Is(err, ErrCorrupt)
}
