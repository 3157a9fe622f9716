package web

import (
	"cmp"
	"io"
	"slices"
	"sort"

	"github.com/calltrail/calltrail/tracefile"
)

// longestRoot returns the function of the lane's longest outermost call,
// the first of the longest, and false for a lane without calls.
func (l *lane) longestRoot() (uint32, bool) {
	best := -1
	for i := 0; i < l.len(); i = int(l.next[i]) {
		if best < 0 || l.dur[i] > l.dur[best] {
			best = i
		}
	}
	if best < 0 {
		return 0, false
	}
	return l.fn[best], true
}

// lane holds the calls of one goroutine in the order they began, as
// parallel arrays: 31 bytes a call, so that ten million calls fit in
// about 300 MB. Calls nest, so the array is the pre-order of the
// goroutine's call tree: a call's subtree is the run [i, next[i]).
type lane struct {
	g      uint64
	start  []int64  // nanoseconds since the trace started
	dur    []int64  // wall time
	fn     []uint32 // function id
	parent []int32  // index of the calling call, -1 at the top
	next   []int32  // index just past the call's subtree
	depth  []uint16 // 1 for the outermost call
	exit   []tracefile.ExitKind
	// err is the error id each call returned, 0 for none. It is made
	// at the lane's first error: most lanes have none, and keep their
	// 31 bytes a call.
	err []uint32
	// span is the OpenTelemetry span each call ran under, as a slot of
	// index.spans, 0 for none: four bytes rather than the span id's
	// eight. Like err, it is made at the lane's first call under a span,
	// so that a trace without spans pays nothing for it.
	span []int32
	// held is the time calls were held up by the trace writer, of the
	// few calls that were: bars are drawn as long as the calls lasted,
	// and say it.
	held map[int32]int64
	// failed lists the calls that returned an error, in order, so that
	// a block of a million merged calls counts its failures with two
	// binary searches rather than a look at each call.
	failed []int32
	// vals holds the arguments and results recorded with --args, of the
	// calls that have them, by call, each call's arguments before its
	// results: a trace of values on a few functions costs the other
	// calls nothing, and a trace without, a nil slice.
	vals []callValue

	maxDepth int
	open     []int32 // calls still running, while the index is built
}

func (l *lane) len() int { return len(l.start) }

// end is when call i ended.
func (l *lane) end(i int) int64 { return l.start[i] + l.dur[i] }

// index is the timeline index: every call of the trace, by goroutine.
type index struct {
	lanes []*lane        // by goroutine id
	byG   map[uint64]int // goroutine id -> position in lanes
	calls int
	gs    map[uint64]tracefile.Goroutine // how each goroutine was started

	// spans are the spans the calls ran under, by the slot lane.span
	// holds; slot 0 is none. hasSpans says the trace has spans at all:
	// some may have no calls.
	spans    []tracefile.SpanID
	slotOf   map[tracefile.SpanID]int32 // spans' slots, while the index is made
	hasSpans bool

	first, last int64 // when its first call began and its last ended
}

// slot returns the slot of span id, made at its first call.
func (ix *index) slot(id tracefile.SpanID) int32 {
	if !id.IsValid() {
		return 0
	}
	if ix.slotOf == nil {
		ix.slotOf = map[tracefile.SpanID]int32{}
		for i, id := range ix.spans {
			ix.slotOf[id] = int32(i)
		}
	}
	s, ok := ix.slotOf[id]
	if !ok {
		if len(ix.spans) == 0 {
			ix.spans = []tracefile.SpanID{{}}
		}
		s = int32(len(ix.spans))
		ix.spans = append(ix.spans, id)
		ix.slotOf[id] = s
		ix.hasSpans = true
	}
	return s
}

// buildIndex reads r, a trace of size bytes, to its end. Like the
// analysis, it keeps what it read before an error.
func buildIndex(r *tracefile.Reader, size int64) (*index, error) {
	ix := &index{byG: map[uint64]int{}, gs: map[uint64]tracefile.Goroutine{}}
	byG := map[uint64]*lane{}
	var last *lane
	var err error
	var ev tracefile.Event
	// Calls come in runs under one span: the last slot looked up is kept
	// at hand.
	var lastSpan tracefile.SpanID
	var lastSlot int32
	for {
		e := r.Read(&ev)
		if e != nil {
			if e != io.EOF {
				err = e
			}
			break
		}
		switch ev.Kind {
		case tracefile.GoroutineEvent:
			if info, ok := r.Goroutine(ev.G); ok {
				ix.gs[ev.G] = info
			}
			continue
		case tracefile.SpanStartEvent, tracefile.SpanEndEvent:
			// A goroutine that starts spans but makes no traced call
			// has no lane.
			ix.hasSpans = true
			continue
		}
		// Events come in runs of one goroutine.
		l := last
		if l == nil || l.g != ev.G {
			l = byG[ev.G]
			if l == nil {
				l = &lane{g: ev.G}
				byG[ev.G] = l
			}
			last = l
		}
		switch ev.Kind {
		case tracefile.EnterEvent:
			if len(l.start) == cap(l.start) {
				l.grow(r.Offset(), size, ix.calls)
			}
			l.enter(ev.Func, ev.Time)
			ix.calls++
			if ev.Span.IsValid() {
				if ev.Span != lastSpan {
					lastSpan, lastSlot = ev.Span, ix.slot(ev.Span)
				}
				l.setSpan(l.len()-1, lastSlot)
			}
		case tracefile.ExitEvent:
			if n := len(l.open); n > 0 {
				// The reader's start: a call open when a snapshot's
				// window began counts from the window's start.
				l.start[l.open[n-1]] = ev.Start
			}
			l.exitCall(ev.Time, ev.Exit, ev.Err, ev.Held)
		case tracefile.ValueEvent:
			l.value(ev.Value)
		}
	}
	for _, l := range byG {
		// Calls left open by a cut trace end where the trace does.
		for len(l.open) > 0 {
			l.exitCall(r.MaxTime(), tracefile.Unfinished, 0, 0)
		}
		l.open = nil
		if n := l.len(); cap(l.start) > n+n/4+64 {
			l.resize(n) // a lane that ended early was given room it never used
		}
		l.listFailed(func(id uint32) bool { return !r.Error(id).End() })
		l.sortValues()
		ix.lanes = append(ix.lanes, l)
	}
	sort.Slice(ix.lanes, func(i, j int) bool { return ix.lanes[i].g < ix.lanes[j].g })
	for i, l := range ix.lanes {
		ix.byG[l.g] = i
	}
	ix.measure()
	return ix, err
}

// measure finds when the index's first call began and its last ended.
func (ix *index) measure() {
	ix.first, ix.last = 0, 0
	seen := false
	for _, l := range ix.lanes {
		if l.len() == 0 {
			continue
		}
		if !seen || l.start[0] < ix.first {
			ix.first = l.start[0]
		}
		seen = true
		for i := 0; i < l.len(); i = int(l.next[i]) {
			ix.last = max(ix.last, l.end(i))
		}
	}
}

// grow makes room for more calls. Appending would copy the arrays a
// dozen times on the way to millions of calls, leaving garbage several
// times their size; instead a lane holding most of the calls read so far
// (read, at offset bytes into a trace of size bytes) is sized at once for
// the calls it will have if it goes on as it went. Other lanes double:
// a projection from a burst of calls early in the file could reserve far
// more than they will ever use.
func (l *lane) grow(offset, size int64, read int) {
	n := l.len()
	c := max(2*n, 4) // most goroutines make few calls: a million of them must fit
	if n >= 1<<14 && 2*n >= read && offset > 0 && size > offset {
		// The projection errs low as much as high (the file's first bytes
		// hold no calls): aim 10% over it, and grow by a quarter past it.
		c = max(n+n/4, int(float64(n)*float64(size)/float64(offset)*1.1))
	}
	l.resize(c)
}

// resize sets the arrays' capacity to c.
func (l *lane) resize(c int) {
	l.start = resized(l.start, c)
	l.dur = resized(l.dur, c)
	l.fn = resized(l.fn, c)
	l.parent = resized(l.parent, c)
	l.next = resized(l.next, c)
	l.depth = resized(l.depth, c)
	l.exit = resized(l.exit, c)
	if l.err != nil {
		l.err = resized(l.err, c)
	}
	if l.span != nil {
		l.span = resized(l.span, c)
	}
}

func resized[T any](s []T, c int) []T {
	t := make([]T, len(s), c)
	copy(t, s)
	return t
}

func (l *lane) enter(fn uint32, t int64) {
	i := int32(len(l.start))
	p := int32(-1)
	if n := len(l.open); n > 0 {
		p = l.open[n-1]
	}
	l.start = append(l.start, t)
	l.dur = append(l.dur, 0)
	l.fn = append(l.fn, fn)
	l.parent = append(l.parent, p)
	l.next = append(l.next, i+1)
	d := len(l.open) + 1
	l.depth = append(l.depth, uint16(min(d, 1<<16-1)))
	l.exit = append(l.exit, tracefile.Return)
	if l.err != nil {
		l.err = append(l.err, 0)
	}
	if l.span != nil {
		l.span = append(l.span, 0)
	}
	l.maxDepth = max(l.maxDepth, d)
	l.open = append(l.open, i)
}

// exitCall ends the innermost open call at time t, as k says, having
// returned error err (0 for none).
func (l *lane) exitCall(t int64, k tracefile.ExitKind, err uint32, held int64) {
	n := len(l.open)
	if n == 0 {
		return // an exit whose call began before the trace did
	}
	i := l.open[n-1]
	l.open = l.open[:n-1]
	l.dur[i] = max(t-l.start[i], 0)
	if held > 0 {
		if l.held == nil {
			l.held = map[int32]int64{}
		}
		l.held[int32(i)] = held
	}
	l.next[i] = int32(len(l.start))
	l.exit[i] = k
	if err != 0 {
		if l.err == nil {
			l.err = make([]uint32, len(l.start), cap(l.start))
		}
		l.err[i] = err
	}
}

// setSpan says call i ran under the span in slot.
func (l *lane) setSpan(i int, slot int32) {
	if l.span == nil {
		if slot == 0 {
			return
		}
		l.span = make([]int32, len(l.start), cap(l.start))
	}
	l.span[i] = slot
}

// spanAt is the slot of the span call i ran under, 0 for none.
func (l *lane) spanAt(i int) int32 {
	if l.span == nil {
		return 0
	}
	return l.span[i]
}

// heldFor is the time call i was held up by the trace writer, which
// its duration leaves out (tracefile.Event.Held).
func (l *lane) heldFor(i int) int64 { return l.held[int32(i)] }

// errAt is the error call i returned, 0 for none.
func (l *lane) errAt(i int) uint32 {
	if l.err == nil {
		return 0
	}
	return l.err[i]
}

// listFailed lists the calls that failed, returning an error that
// failure says is one, once the lane is read: they end, and so fail, out
// of the order they began in.
func (l *lane) listFailed(failure func(id uint32) bool) {
	l.failed = nil
	for i, e := range l.err {
		if e != 0 && failure(e) {
			l.failed = append(l.failed, int32(i))
		}
	}
}

// failedIn counts the calls in [lo, hi) that returned an error. Most
// lanes have none: it costs them a test, inlined into window's loop.
func (l *lane) failedIn(lo, hi int) int32 {
	if len(l.failed) == 0 {
		return 0
	}
	return l.failedBefore(hi) - l.failedBefore(lo)
}

// failedBefore counts the calls before call i that returned an error.
func (l *lane) failedBefore(i int) int32 {
	return int32(sort.Search(len(l.failed), func(k int) bool { return int(l.failed[k]) >= i }))
}

// callValue is an argument or result of a call: a tracefile.Value in 32
// bytes rather than 48, with the call's index in its lane.
type callValue struct {
	call   int32
	kind   tracefile.ValueKind
	result bool
	bits   uint64
	s      string // a string's bytes, or a type's name
}

func (v callValue) value() tracefile.Value {
	tv := tracefile.Value{Kind: v.kind, Result: v.result, Bits: v.bits}
	if v.kind == tracefile.TypeValue {
		tv.Type = v.s
	} else {
		tv.Str = v.s
	}
	return tv
}

// value keeps a value of the innermost open call.
func (l *lane) value(v tracefile.Value) {
	n := len(l.open)
	if n == 0 {
		return // of a call that began before the trace did
	}
	s := v.Str
	if v.Kind == tracefile.TypeValue {
		s = v.Type
	}
	l.vals = append(l.vals, callValue{call: l.open[n-1], kind: v.Kind, result: v.Result, bits: v.Bits, s: s})
}

// sortValues puts the values in order of call, once the lane is read:
// a call's results come at its end, after its callees' values. A stable
// sort keeps each call's arguments before its results, in their order.
func (l *lane) sortValues() {
	byCall := func(a, b callValue) int { return cmp.Compare(a.call, b.call) }
	if !slices.IsSortedFunc(l.vals, byCall) {
		slices.SortStableFunc(l.vals, byCall)
	}
	if cap(l.vals) > len(l.vals)+len(l.vals)/4+16 {
		l.vals = resized(l.vals, len(l.vals)) // appending left up to twice the room
	}
}

// valuesOf returns the arguments and results of call i, nil for none.
func (l *lane) valuesOf(i int) []callValue {
	if len(l.vals) == 0 {
		return nil
	}
	c := int32(i)
	lo := sort.Search(len(l.vals), func(k int) bool { return l.vals[k].call >= c })
	hi := lo
	for hi < len(l.vals) && l.vals[hi].call == c {
		hi++
	}
	if hi == lo {
		return nil
	}
	return l.vals[lo:hi:hi]
}
