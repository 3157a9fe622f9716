package calltrail

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/calltrail/calltrail/internal/clock"
	"github.com/calltrail/calltrail/internal/profhook"
	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/tracewrite"
)

// flight is the flight recorder (CALLTRAIL_MODE=flight): instead of a
// file, the writer puts the encoded events of each of its cycles into a
// segment kept in memory, and drops the oldest segments to stay within
// the budget. Encoded events take about 2.5 bytes, a seventh of a ring
// slot, so the memory holds seven times the history the rings would.
//
// A trace of the window (snapshot) starts with the calls that were open
// when its first segment began, with their true start times, so that no
// exit lacks its enter; following them as segments are dropped costs one
// decoding of each dropped segment.
type flight struct {
	budget atomic.Int64 // bytes of segments kept
	t0     int64        // the clock when tracing started, in trace units
	meta   func() map[string]string

	mu    sync.Mutex
	segs  []segment // oldest first
	bytes int
	open  openCalls // calls open when segs[0] begins
	// openSpans are the spans open when segs[0] begins.
	openSpans openSpans
	gs        map[uint64]goroutineRecord
	dropped   uint64 // segments dropped for room
	before    int64  // the clock at the end of the last segment dropped, in trace units
	// ck is where window last followed the open calls to, later than
	// open: the next snapshot of the last seconds, which top asks for
	// every second, follows on from it, over the segments written
	// since, instead of over the whole window again (half a second
	// for a 32 MiB window).
	ck checkpoint
	// spans are the latest spans started, at most maxFlightSpans, for
	// the span table of a snapshot.
	spans []flightSpan
}

// A flightSpan is a span's entry, with the number of the segment of the
// cycle that added it: a snapshot writes the entries its window needs
// (see table).
type flightSpan struct {
	records.Span
	seq uint64
}

// A checkpoint is what the flight recorder's calls and spans open were
// when segment seq began, counting the segments dropped; before is the
// clock at the end of the segment before it. The zero checkpoint is
// none.
type checkpoint struct {
	seq    uint64
	open   openCalls
	spans  openSpans
	before int64
}

// maxFlightSpans bounds the span table a flight recorder keeps. A span
// whose entry is gone reads in a snapshot by its id alone.
const maxFlightSpans = 1 << 14

// spanSlack is how many cycles before its start event a span's entry may
// have been added: the entry goes in the table before the event goes in
// a ring, which the writer may drain a cycle later, or later still if
// the goroutine stops between the two.
const spanSlack = 8

// addSpans keeps spans started in the latest cycle, whose segment is the
// next to be added.
func (f *flight) addSpans(ss []records.Span) {
	if len(ss) == 0 {
		return
	}
	f.mu.Lock()
	seq := f.dropped + uint64(len(f.segs))
	for _, sp := range ss {
		f.spans = append(f.spans, flightSpan{sp, seq})
	}
	if n := len(f.spans); n > maxFlightSpans {
		f.spans = append(f.spans[:0], f.spans[n-maxFlightSpans:]...)
	}
	f.mu.Unlock()
}

// table returns the span entries a snapshot needs whose first segment is
// number first: the spans started from a little before it on
// (spanSlack), those open when it starts (open), and their ancestors,
// which --span matches by name. An idle program's snapshot then carries
// the entries of none of the spans that ended before its window, where
// it carried the whole table, 16,384 entries. f.mu is held.
func (f *flight) table(first uint64, open openSpans) []records.Span {
	keep := make([]bool, len(f.spans))
	at := make(map[records.SpanID]int, len(f.spans))
	for i, sp := range f.spans {
		at[sp.ID] = i
	}
	var kept []records.Span
	mark := func(i int) {
		for !keep[i] {
			keep[i] = true
			j, ok := at[f.spans[i].Parent]
			if !ok || f.spans[i].Parent == (records.SpanID{}) {
				return
			}
			i = j
		}
	}
	for i, sp := range f.spans {
		if _, ok := open[sp.ID]; ok || sp.seq+spanSlack >= first {
			mark(i)
		}
	}
	for i, sp := range f.spans {
		if keep[i] {
			kept = append(kept, sp.Span)
		}
	}
	return kept
}

// goroutineRecord is a goroutine's creation record, first seen at ticks.
type goroutineRecord struct {
	records.Goroutine
	ticks int64
}

// A segment is one writer cycle's encoded chunks: a clock point, its
// events and the counters.
type segment struct {
	data       []byte
	start, end int64         // nanoseconds since tracing started
	ticks      int64         // the clock at end, in trace units
	calls      int           // calls entered
	stats      records.Stats // the counters at its end, as its chunks give them
}

type openCall struct {
	fn    uint32
	ticks int64
	held  int64 // ticks of it the goroutine waited for the trace writer, its callees' included
}

// openCalls are the calls open in each goroutine, as events go by.
type openCalls map[uint64][]openCall

// A cursor applies events to open calls. It keeps the calls of the
// goroutine of the latest event out of the map until an event of another
// comes, since a goroutine's events come in runs: a map access an event
// took half the time of following a segment.
type cursor struct {
	o  openCalls
	g  uint64
	st []openCall // g's calls, out of o while in
	in bool
}

// apply applies an enter, an exit or a wait for the writer, and returns
// the call an exit ended; false if it ended none (its enter came before
// open looked). A wait is the innermost call's open when it began, as
// the reader counts it (tracefile.Event.Held).
func (c *cursor) apply(e tracewrite.ScanEvent) (openCall, bool) {
	switch e.Kind {
	case records.SpanStartEvent, records.SpanEndEvent:
		return openCall{}, false
	}
	if !c.holds(e.G) {
		c.flush()
		c.g, c.st, c.in = e.G, c.o[e.G], true
	}
	st := c.st
	switch e.Kind {
	case records.EnterEvent:
		c.push(e.Func, e.Ticks)
		return openCall{}, false
	case records.HeldEvent:
		for i := len(st) - 1; i >= 0; i-- {
			if st[i].ticks <= e.From {
				st[i].held += e.Ticks - e.From
				break
			}
		}
		return openCall{}, false
	}
	if len(st) == 0 {
		return openCall{}, false
	}
	return c.pop(), true
}

// holds reports whether the calls of goroutine g are in hand.
func (c *cursor) holds(g uint64) bool { return c.in && g == c.g }

// push opens a call of fn at ticks in the goroutine in hand.
func (c *cursor) push(fn uint32, ticks int64) {
	c.st = append(c.st, openCall{fn: fn, ticks: ticks})
}

// pop ends the innermost call of the goroutine in hand, which there must
// be, and returns it: the time it waited for the writer its caller waited
// too.
func (c *cursor) pop() openCall {
	n := len(c.st)
	top := c.st[n-1]
	c.st = c.st[:n-1]
	if n > 1 {
		c.st[n-2].held += top.held
	}
	return top
}

// flush puts the calls of the goroutine in hand back in the map, and
// leaves out a goroutine with none.
func (c *cursor) flush() {
	if !c.in {
		return
	}
	if len(c.st) == 0 {
		delete(c.o, c.g)
	} else {
		c.o[c.g] = c.st
	}
	c.in = false
}

// clone returns a copy of o that following events does not change.
func (o openCalls) clone() openCalls {
	c := make(openCalls, len(o))
	for g, st := range o {
		c[g] = slices.Clone(st)
	}
	return c
}

// openSpans are the spans open, by id: the goroutine that started each,
// and when.
type openSpans map[records.SpanID]openSpan

type openSpan struct {
	g     uint64
	ticks int64
}

// follow applies the enters, exits and spans of the chunks in data to
// calls and spans.
func follow(data []byte, calls openCalls, spans openSpans) {
	cur := cursor{o: calls}
	tracewrite.ScanEvents(data, func(e tracewrite.ScanEvent) {
		switch e.Kind {
		case records.SpanStartEvent:
			spans[e.Span] = openSpan{e.G, e.Ticks}
		case records.SpanEndEvent:
			delete(spans, e.Span)
		// apply's most common cases first, inline: an enter or an exit
		// of the goroutine in hand.
		case records.EnterEvent:
			if cur.holds(e.G) {
				cur.push(e.Func, e.Ticks)
				return
			}
			cur.apply(e)
		case records.ExitEvent:
			if cur.holds(e.G) && len(cur.st) > 0 {
				cur.pop()
				return
			}
			cur.apply(e)
		default:
			cur.apply(e)
		}
	})
	cur.flush()
}

// maxGoroutineRecords bounds the goroutine records a flight recorder
// keeps: past it, those of goroutines with no call open in the window go.
const maxGoroutineRecords = 1 << 18

func newFlight(budget int, t0 int64, meta func() map[string]string) *flight {
	f := &flight{t0: t0, meta: meta, open: openCalls{}, openSpans: openSpans{}, gs: map[uint64]goroutineRecord{}}
	f.budget.Store(int64(budget))
	return f
}

// segmentBytes is how large the writer lets a segment grow: an eighth of
// the budget, so that dropping the oldest segment for a new one leaves
// most of the window in place.
func (f *flight) segmentBytes() int {
	return int(min(f.budget.Load()/8, flushBytes))
}

// add keeps s, dropping the oldest segments while the budget is exceeded.
func (f *flight) add(s segment) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.segs = append(f.segs, s)
	f.bytes += len(s.data)
	// The newest two segments stay whatever their size: the newest may
	// be a short one a snapshot asked for, and the one before it the
	// last seconds the snapshot is for.
	for f.bytes > int(f.budget.Load()) && len(f.segs) > 2 {
		old := f.segs[0]
		follow(old.data, f.open, f.openSpans)
		f.segs[0] = segment{}
		f.segs = f.segs[1:]
		f.bytes -= len(old.data)
		f.dropped++
		f.before = old.ticks
	}
	if f.ck.seq < f.dropped {
		f.ck = checkpoint{} // open has passed it
	}
	if len(f.gs) > maxGoroutineRecords {
		maps.DeleteFunc(f.gs, func(g uint64, _ goroutineRecord) bool { return len(f.open[g]) == 0 })
	}
}

func (f *flight) goroutine(gr records.Goroutine, ticks int64) {
	f.mu.Lock()
	f.gs[gr.ID] = goroutineRecord{gr, ticks}
	f.mu.Unlock()
}

// Window describes the calls a flight recorder holds.
type Window struct {
	Start, End time.Duration // since tracing started
	Bytes      int           // encoded events held
	Budget     int           // at most this many bytes
	Calls      int           // calls entered within the window
	Open       int           // calls open at its start, entered before it
	Dropped    uint64        // segments dropped for room since tracing started
	seq        uint64        // the number of its first segment
}

// window returns what f holds from since on (since tracing started; 0 for
// all): the segments, and the calls open when the first of them began.
//
// It returns the goroutine records of the goroutines started before the
// window: the segments hold the others'.
func (f *flight) window(since time.Duration) ([]segment, openCalls, openSpans, map[uint64]goroutineRecord, Window) {
	f.mu.Lock()
	first := f.dropped // segs[0]'s number
	segs := slices.Clone(f.segs)
	k := 0
	for k < len(segs) && segs[k].end <= int64(since) {
		k++
	}
	from, open, spans, before := 0, f.open, f.openSpans, f.before
	if ck := f.ck; ck.open != nil && ck.seq <= first+uint64(k) {
		from, open, spans, before = int(ck.seq-first), ck.open, ck.spans, ck.before
	}
	open, spans = open.clone(), maps.Clone(spans)
	gs := maps.Clone(f.gs)
	w := f.summary()
	f.mu.Unlock()
	for _, s := range segs[from:k] {
		follow(s.data, open, spans)
		before = s.ticks
	}
	if k > from {
		ck := checkpoint{seq: first + uint64(k), open: open.clone(), spans: maps.Clone(spans), before: before}
		f.mu.Lock()
		if ck.seq > f.ck.seq && ck.seq >= f.dropped {
			f.ck = ck
		}
		f.mu.Unlock()
	}
	maps.DeleteFunc(gs, func(_ uint64, r goroutineRecord) bool { return r.ticks > before })
	segs = segs[k:]
	w.seq = first + uint64(k)
	w.Start, w.End = span(segs)
	for _, s := range segs {
		w.Calls += s.calls
	}
	for _, st := range open {
		w.Open += len(st)
	}
	return segs, open, spans, gs, w
}

// write writes a trace of the window from since on to out: the metadata,
// every function, the trace's first clock point, the calls open at the
// window's start and the goroutine records in order of time, then the
// segments as encoded.
func (f *flight) write(out io.Writer, since time.Duration, funcs []records.Func, errs []records.Error, reason string, profiles map[string][]byte) (Window, error) {
	segs, open, spans, gs, w := f.window(since)
	meta := f.meta() // mode=flight already
	meta["window_start_ns"] = strconv.FormatInt(int64(w.Start), 10)
	meta["window_end_ns"] = strconv.FormatInt(int64(w.End), 10)
	meta["window_open_calls"] = strconv.Itoa(w.Open)
	enc, err := tracewrite.NewEncoder(out, meta)
	if err != nil {
		return w, err
	}
	enc.Funcs(1, funcs)
	enc.Errors(1, errs)
	f.mu.Lock()
	table := f.table(w.seq, spans)
	f.mu.Unlock()
	enc.Spans(table)
	for _, c := range allCoverage() {
		enc.Coverage(c)
	}
	var totals tracewrite.Totals
	enc.Clock(f.t0, 0)
	totals.Clock(f.t0, 0)
	if len(segs) > 0 {
		// A reader converts ticks at the rate of the clock points it
		// has read: the newest goes first, so that the goroutine
		// records and open calls, which come before any segment's,
		// are read at the true rate rather than a tick a nanosecond.
		last := segs[len(segs)-1]
		enc.Clock(last.ticks, last.end)
		totals.Clock(last.ticks, last.end)
	}
	// The open calls and the goroutine records go in one batch, in
	// order of time, a call before a record of the same tick: a reader
	// ties a goroutine to the call its parent had open when it read the
	// goroutine's record, and the parent's calls that began before the
	// goroutine and are open still were open when it started.
	// The spans open at the window's start come first of their tick,
	// so that the calls that began under them read as theirs.
	type item struct {
		ticks int64
		g     uint64
		fn    uint32 // an open call's function; 0 for a goroutine record or a span
		span  records.SpanID
	}
	rank := func(it item) int {
		switch {
		case it.span.IsValid():
			return 0
		case it.fn != 0:
			return 1
		}
		return 2
	}
	var items []item
	for _, g := range sortedKeys(open) {
		for _, c := range open[g] {
			items = append(items, item{ticks: c.ticks, g: g, fn: c.fn})
		}
	}
	for _, g := range sortedKeys(gs) {
		items = append(items, item{ticks: gs[g].ticks, g: g})
	}
	for id, s := range spans {
		items = append(items, item{ticks: s.ticks, g: s.g, span: id})
	}
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].ticks != items[j].ticks {
			return items[i].ticks < items[j].ticks
		}
		if rank(items[i]) != rank(items[j]) {
			return rank(items[i]) < rank(items[j])
		}
		return bytes.Compare(items[i].span[:], items[j].span[:]) < 0
	})
	var b tracewrite.Batch
	b.Shard = 1 << 16 // tells the batch from the segments' only
	for _, it := range items {
		switch {
		case it.span.IsValid():
			b.AppendRaw([]tracewrite.Raw{
				{Word: tracewrite.RawSpan(it.g, false), Time: it.ticks},
				{Word: tracewrite.RawSpanID(it.g), Time: int64(binary.LittleEndian.Uint64(it.span[:]))},
			})
			totals.At(it.ticks)
		case it.fn != 0:
			b.Enter(it.g, it.fn, it.ticks)
			totals.Enter(it.g, it.fn, it.ticks)
		default:
			// Its goroutine counts if it made a call in the window
			// or has one open: the record may be of one gone before.
			b.Goroutine(gs[it.g].Goroutine, it.ticks)
			totals.At(it.ticks)
		}
	}
	enc.Events(&b)
	totals.Fold()
	if err := enc.Flush(); err != nil {
		return w, err
	}
	for _, s := range segs {
		enc.Chunks(s.data)
		if err := enc.Flush(); err != nil {
			return w, err
		}
		// The summary's totals, as a reader of the snapshot would
		// count them: one pass over the window, off the writer. The
		// segment's clock point comes first in it.
		totals.Clock(s.ticks, s.end)
		tracewrite.ScanEvents(s.data, totals.Count)
		totals.Fold()
	}
	for name, data := range profiles {
		enc.Profile(name, data)
	}
	if len(segs) > 0 {
		enc.Stats(segs[len(segs)-1].stats) // as the last segment's: for the summary
	}
	enc.End(reason, time.Now())
	enc.Summary(&totals)
	return w, enc.Flush()
}

// summary describes the window as f holds it, its calls and open calls
// aside. f.mu must be held.
func (f *flight) summary() Window {
	w := Window{Bytes: f.bytes, Budget: int(f.budget.Load()), Dropped: f.dropped}
	w.Start, w.End = span(f.segs)
	return w
}

// span returns when the earliest of segs starts and the last ends. A
// segment may start before the one before it: it holds an event drained
// late (see writer.segEarliest).
func span(segs []segment) (start, end time.Duration) {
	if len(segs) == 0 {
		return 0, 0
	}
	first := segs[0].start
	for _, s := range segs[1:] {
		first = min(first, s.start)
	}
	return time.Duration(first), time.Duration(segs[len(segs)-1].end)
}

func sortedKeys[V any](m map[uint64]V) []uint64 {
	keys := make([]uint64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// writeFlight is write for the flight recorder: the cycle's events go into
// a segment, with a clock point and the counters.
func (w *writer) writeFlight() {
	w.t.reg.unwritten() // a snapshot writes the whole tables
	w.t.errs.unwritten()
	ss := w.t.spans.unwritten()
	w.flight.addSpans(ss)
	if w.triggers != nil {
		w.triggers.named(ss)
	}
	now, ns := clock.Now(), clock.Nanotime()-w.startNs
	s := segment{start: w.segStart, end: ns, ticks: now}
	rate := 0.0 // ns a tick since tracing started
	if now > w.flight.t0 {
		rate = float64(ns) / float64(now-w.flight.t0)
	}
	if w.segEvents && w.segEarliest < now && rate > 0 {
		// The segment starts at its earliest event if that came before
		// the previous cycle.
		e := int64(float64(w.segEarliest-w.flight.t0) * rate)
		s.start = max(min(s.start, e), 0)
	}
	w.segEvents = false
	// The clock point goes first, as in a trace file: a reader converts
	// the cycle's events at the rate it gives, as the summary of a
	// snapshot does its last event's.
	w.seg.Clock(now, ns)
	// Goroutine records go before the events of the cycle, as in a
	// trace file (see write).
	w.seg.Events(&w.gbatch)
	s.calls += w.batch.Enters()
	w.calls.Add(uint64(w.batch.Enters()))
	w.seg.Events(&w.batch)
	w.flushes++
	s.stats = w.stats()
	w.seg.Stats(s.stats)
	w.seg.Flush()
	s.data = bytes.Clone(w.segBuf.Bytes())
	w.segBuf.Reset()
	w.segStart = ns
	if w.triggers != nil && rate > 0 {
		w.triggers.scan(s.data, &w.t.reg, rate)
	}
	w.flight.add(s)
}

// errNotFlight is what the flight recorder's functions return in a
// program that does not run one.
var errNotFlight = errors.New("calltrail: no flight recorder: the program runs without CALLTRAIL_MODE=flight (or was built without tracing)")

// Snapshot writes a trace of the flight recorder's window, the program's
// most recent calls, to out, and describes the window. Every verb of
// calltrail reads it as any trace. The calls open when the window starts
// are in the trace with their start times, and the trace's metadata says
// when the window starts (window_start_ns).
func Snapshot(out io.Writer) (Window, error) {
	if !flying() {
		return Window{}, errNotFlight
	}
	return snapshot(out, 0, "snapshot", nil)
}

// flying reports whether the program runs a flight recorder.
func flying() bool { return Enabled && tr != nil && tr.w.flight != nil }

// elapsed is the time since tracing started.
func elapsed() time.Duration { return time.Duration(clock.Nanotime() - tr.w.startNs) }

// snapshot writes the window from since on; the program must be flying.
func snapshot(out io.Writer, since time.Duration, reason string, profiles map[string][]byte) (Window, error) {
	tr.w.request("", false) // what is recorded so far goes into a segment
	return tr.w.flight.write(out, since, tr.reg.all(), tr.errs.all(), reason, profiles)
}

// Capture records the calls of the next d (switching recording on for that
// time if the program is paused, and off again after) and writes a trace
// of them to out, as Snapshot does. It needs the flight recorder. With
// profiles "cpu", the Go runtime's CPU profile runs for that time too and
// goes into the trace, for the on-CPU and waiting split of every verb:
// the program must link package profiles for it.
func Capture(out io.Writer, d time.Duration, profiles ...string) (Window, error) {
	return CaptureContext(context.Background(), out, d, profiles...)
}

// CaptureContext is Capture, cut short when ctx ends: it then writes
// nothing and returns ctx's error, and a paused program is switched off
// again at once rather than at the end of d (the client that asked for
// the capture has gone).
func CaptureContext(ctx context.Context, out io.Writer, d time.Duration, profiles ...string) (Window, error) {
	if !flying() {
		return Window{}, errNotFlight
	}
	var cpu *bytes.Buffer
	for _, p := range profiles {
		if p != "cpu" {
			return Window{}, fmt.Errorf("calltrail: profile %q: a capture takes the cpu profile only", p)
		}
	}
	pp := profhook.Get()
	if len(profiles) > 0 {
		if pp == nil {
			return Window{}, errors.New("calltrail: the CPU profile: this program was built without package github.com/calltrail/calltrail/profiles")
		}
		cpu = new(bytes.Buffer)
		if err := pp.StartCPUProfile(cpu); err != nil {
			return Window{}, fmt.Errorf("calltrail: the CPU profile: %v", err)
		}
	}
	start := elapsed()
	captures.begin()
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
	}
	captures.end()
	if cpu != nil {
		pp.StopCPUProfile()
	}
	if err := ctx.Err(); err != nil {
		return Window{}, err
	}
	var got map[string][]byte
	if cpu != nil {
		got = map[string][]byte{"cpu": cpu.Bytes()}
	}
	return snapshot(out, start, "capture", got)
}

// captures switches a paused program on while any capture runs.
var captures captureCount

type captureCount struct {
	mu     sync.Mutex
	n      int
	paused bool // recording was off when the first capture began
}

func (c *captureCount) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		c.paused = !recording.Load()
		if c.paused {
			resume()
		}
	}
	c.n++
}

// keepOn notes that recording was switched on during the captures, so
// that their end leaves it on.
func (c *captureCount) keepOn() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused = false
}

func (c *captureCount) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n--; c.n == 0 && c.paused {
		Pause()
	}
}

// SnapshotLast is Snapshot for the last d of the window only.
func SnapshotLast(out io.Writer, d time.Duration) (Window, error) {
	if !flying() {
		return Window{}, errNotFlight
	}
	return snapshot(out, max(elapsed()-d, 0), "snapshot", nil)
}

// Counters are a traced program's running totals, for a live view.
type Counters struct {
	Recording bool          // calls are being recorded (not paused)
	Mode      string        // "file", "flight", or "off" when not tracing
	Elapsed   time.Duration // since tracing started
	Calls     uint64        // calls recorded so far
	Dropped   uint64        // calls dropped (CALLTRAIL_FULL=drop, or no room)
	Waits     uint64        // times a goroutine waited for the writer
	Held      time.Duration // time goroutines waited for the writer, summed
	RingBytes int           // memory of the rings
	Window    Window        // the flight recorder's, in flight mode
	// PerSecond is the calls a second over the flight recorder's last
	// second or so (its newest segments); 0 in file mode.
	PerSecond float64
}

// ReadCounters returns the program's running totals.
func ReadCounters() Counters {
	if !Enabled || tr == nil {
		return Counters{Mode: "off"}
	}
	w := tr.w
	st := tr.ringStats()
	c := Counters{
		Recording: recording.Load(), Mode: "file", Elapsed: elapsed(),
		Calls: w.calls.Load(), Dropped: st.DroppedCalls, Waits: st.Waits, Held: time.Duration(st.HeldNs),
		RingBytes: len(tr.rings) * tr.rings[0].Len() * slotSize,
	}
	if f := w.flight; f != nil {
		c.Mode = "flight"
		f.mu.Lock()
		c.Window = f.summary()
		if n := len(f.segs); n > 0 {
			calls, i := 0, n-1
			for ; i >= 0 && f.segs[n-1].end-f.segs[i].start < int64(time.Second); i-- {
				calls += f.segs[i].calls
			}
			if span := f.segs[n-1].end - f.segs[i+1].start; span > 0 {
				c.PerSecond = float64(calls) / (float64(span) / 1e9)
			}
		}
		f.mu.Unlock()
	}
	return c
}
