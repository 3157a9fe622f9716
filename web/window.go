package web

import "sort"

// item is one bar of a timeline response: a call, or a block of calls
// too narrow to draw apart, merged.
type item struct {
	start, dur int64
	fn         uint32 // 0 for a block of several functions
	first      uint32 // the function of the block's first call
	err        uint32 // the error of its first call, which the bar names when it stands for one
	failed     int32  // calls it stands for that returned an error
	depth      int
	count      int // calls in the block, 1 for a call
	call       int // index of the call in its lane, -1 for a block
}

// callItem is the bar of call c, drawn on its own.
func (l *lane) callItem(c int) item {
	e := l.errAt(c)
	return item{start: l.start[c], dur: l.dur[c], fn: l.fn[c], first: l.fn[c], err: e, failed: l.failedIn(c, c+1), depth: int(l.depth[c]), count: 1, call: c}
}

// blockItem is a block holding narrow call c and its callees.
func (l *lane) blockItem(c int) item {
	next := int(l.next[c])
	return item{start: l.start[c], dur: l.dur[c], fn: l.fn[c], first: l.fn[c], err: l.errAt(c), failed: l.failedIn(c, next), depth: int(l.depth[c]), count: next - c, call: -1}
}

// window returns the bars of lane l overlapping [from, to), nested at
// most maxDepth deep: the calls lasting at least minDur, and blocks
// merging shorter ones (with their callees) that lie within minDur of
// each other at the same depth. It visits the wide calls and one call per
// merged run of narrow siblings, not every call in the window, and skips
// what lies deeper than maxDepth whole.
func (l *lane) window(from, to, minDur int64, maxDepth int, out []item) []item {
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
			out = append(out, l.callItem(c))
			return
		}
		if b := &pending[d]; b.count > 0 && l.start[c]-(b.start+b.dur) < minDur {
			next := int(l.next[c])
			b.dur = max(b.dur, l.end(c)-b.start)
			b.count += next - c
			b.failed += l.failedIn(c, next)
			if b.fn != l.fn[c] {
				b.fn = 0
			}
			return
		}
		flush(d)
		pending[d] = l.blockItem(c)
	}
	first := i0
	for k := len(open) - 1; k >= 0; k-- {
		o := open[k]
		if int(l.depth[o]) > maxDepth {
			break
		}
		add(o)
		if l.dur[o] < minDur {
			// Its block holds its callees: go on after them.
			first = max(first, int(l.next[o]))
			break
		}
	}
	for c := first; c < n && l.start[c] < to; {
		if int(l.depth[c]) > maxDepth {
			c = int(l.next[c])
			continue
		}
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
	b.failed += l.failedIn(next, upTo)
	b.fn = 0 // calls not looked at one by one may be of other functions
	return upTo
}
