package web

import (
	"io"
	"sort"

	"github.com/calltrail/calltrail/tracefile"
)

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
}

// buildIndex reads r, a trace of size bytes, to its end. Like the
// analysis, it keeps what it read before an error.
func buildIndex(r *tracefile.Reader, size int64) (*index, error) {
	ix := &index{byG: map[uint64]int{}, gs: map[uint64]tracefile.Goroutine{}}
	byG := map[uint64]*lane{}
	var last *lane
	var err error
	for {
		ev, e := r.Next()
		if e != nil {
			if e != io.EOF {
				err = e
			}
			break
		}
		if ev.Kind == tracefile.GoroutineEvent {
			if info, ok := r.Goroutine(ev.G); ok {
				ix.gs[ev.G] = info
			}
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
				l.grow(r.Offset(), size)
			}
			l.enter(ev.Func, ev.Time)
		case tracefile.ExitEvent:
			l.exitCall(ev.Time, ev.Exit)
		}
	}
	for _, l := range byG {
		// Calls left open by a cut trace end where the trace does.
		for len(l.open) > 0 {
			l.exitCall(r.MaxTime(), tracefile.Unfinished)
		}
		l.open = nil
		if n := l.len(); cap(l.start) > n+n/4+64 {
			l.resize(n) // a lane that ended early was given room it never used
		}
		ix.lanes = append(ix.lanes, l)
		ix.calls += l.len()
	}
	sort.Slice(ix.lanes, func(i, j int) bool { return ix.lanes[i].g < ix.lanes[j].g })
	for i, l := range ix.lanes {
		ix.byG[l.g] = i
	}
	return ix, err
}

// grow makes room for more calls. Appending would copy the arrays a
// dozen times on the way to millions of calls, leaving garbage several
// times their size; instead a long lane is sized at once for the calls
// it will have if it goes on as it went, at offset bytes into a trace of
// size bytes.
func (l *lane) grow(offset, size int64) {
	n := l.len()
	c := max(2*n, 64)
	if n >= 1<<14 && offset > 0 && size > offset {
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
	l.maxDepth = max(l.maxDepth, d)
	l.open = append(l.open, i)
}

func (l *lane) exitCall(t int64, k tracefile.ExitKind) {
	n := len(l.open)
	if n == 0 {
		return // an exit whose call began before the trace did
	}
	i := l.open[n-1]
	l.open = l.open[:n-1]
	l.dur[i] = max(t-l.start[i], 0)
	l.next[i] = int32(len(l.start))
	l.exit[i] = k
}

// item is one bar of a timeline response: a call, or a block of calls
// too narrow to draw apart, merged.
type item struct {
	start, dur int64
	fn         uint32 // 0 for a block of several functions
	depth      int
	count      int // calls in the block, 1 for a call
	call       int // index of the call in its lane, -1 for a block
}

// window returns the bars of lane l overlapping [from, to): the calls
// lasting at least minDur, and blocks merging shorter ones (with their
// callees) that lie within minDur of each other at the same depth. It
// visits the wide calls and one call per merged run of narrow siblings,
// not every call in the window.
func (l *lane) window(from, to, minDur int64, out []item) []item {
	minDur = max(minDur, 1)
	n := l.len()
	i0 := sort.Search(n, func(i int) bool { return l.start[i] >= from })
	// The calls running at from: the last call begun before it and its
	// callers, those of them not over yet.
	var open []int
	for c := i0 - 1; c >= 0; c = int(l.parent[c]) {
		if l.end(c) > from {
			open = append(open, c)
		}
	}
	pending := make([]item, l.maxDepth+1) // the block growing at each depth; count 0 for none
	flush := func(d int) {
		if pending[d].count > 0 {
			out = append(out, pending[d])
			pending[d].count = 0
		}
	}
	add := func(c int) {
		d := int(l.depth[c])
		if l.dur[c] >= minDur {
			out = append(out, item{l.start[c], l.dur[c], l.fn[c], d, 1, c})
			return
		}
		calls := int(l.next[c]) - c
		if b := &pending[d]; b.count > 0 && l.start[c]-(b.start+b.dur) < minDur {
			b.dur = max(b.dur, l.end(c)-b.start)
			b.count += calls
			if b.fn != l.fn[c] {
				b.fn = 0
			}
			return
		}
		flush(d)
		pending[d] = item{l.start[c], l.dur[c], l.fn[c], d, calls, -1}
	}
	for k := len(open) - 1; k >= 0; k-- {
		add(open[k])
	}
	for c := i0; c < n && l.start[c] < to; {
		add(c)
		if l.dur[c] >= minDur {
			c++
		} else {
			// Its callees are narrower still; its narrow siblings
			// within a pixel join its block in one step.
			c = l.mergeSiblings(c, &pending[l.depth[c]], minDur, to)
		}
	}
	for d := range pending {
		flush(d)
	}
	return out
}

// mergeSiblings adds to block b, which holds the narrow call c, the
// siblings of c that follow it closely enough to join b, with their
// callees, and returns the index to go on from. It finds them by a
// binary search on start times, so that a loop of a million short calls
// costs a step per pixel, not per call.
//
// Only the last sibling the search finds can be wide: a wide sibling
// before it would end at least minDur after c, and the last could then
// not begin before the block's reach, c's end plus minDur.
func (l *lane) mergeSiblings(c int, b *item, minDur, to int64) int {
	next := int(l.next[c])
	end := l.len()
	if p := l.parent[c]; p >= 0 {
		end = int(l.next[p])
	}
	reach := min(b.start+b.dur+minDur, to)
	j := next + sort.Search(end-next, func(k int) bool { return l.start[next+k] >= reach })
	if j <= next+1 {
		return next // one call at most: the caller's loop takes it
	}
	d := l.depth[c]
	sibling := func(i int) int { // the sibling of c that holds call i
		for l.depth[i] > d {
			i = int(l.parent[i])
		}
		return i
	}
	last := sibling(j - 1)
	upTo := last // the siblings before it join b
	if l.dur[last] < minDur {
		upTo = int(l.next[last]) // and it too
	}
	if upTo == next {
		return next
	}
	b.dur = max(b.dur, l.end(sibling(upTo-1))-b.start)
	b.count += upTo - next
	b.fn = 0 // calls not looked at one by one may be of other functions
	return upTo
}
