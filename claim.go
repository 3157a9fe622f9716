package calltrail

import (
	"sync/atomic"
	_ "unsafe" // for go:linkname

	"github.com/calltrail/calltrail/internal/clock"
	"github.com/calltrail/calltrail/internal/gstate"
	"github.com/calltrail/calltrail/internal/ring"
	"github.com/calltrail/calltrail/internal/tracewrite"
)

// procPin and procUnpin keep the calling goroutine on its P, preemption
// off, and return the P's id: the runtime exports them for packages such
// as sync.Pool that keep data per P.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// Rings per P. Under fullWait, the tracer has a ring for each P the
// program may run on, written only by the goroutine running on that P,
// which stays on it while it writes: slots are taken with plain loads and
// stores, no atomic read-modify-write, which on some hosts costs a third
// of a traced call. The hot path (enter, exitErr) stays on the P by being
// nosplit, and reads the P from the runtime's m (gstate.StateP); the
// other paths pin the goroutine with procPin, as claim does. A last ring
// takes the events of Ps beyond those, any goroutine writing it
// (ring.TakeShared).
//
// A goroutine's events then go to the ring of whichever P it runs on, and
// the writer must read them in order across rings. Each goroutine's
// latest ring is kept in a table (where); when a goroutine writes to
// another ring, or the table no longer says (another goroutine took its
// entry), a barrier goes first: a slot that is no event, numbered from a
// counter, naming the goroutine's previous ring if the table knew it. The
// writer, meeting a barrier, drains that ring, or every other ring when
// it is not known, before it moves past it (see writer.drainRing). The
// goroutine's earlier events were written before the barrier's number was
// taken, so they are in the other rings before any barrier numbered after
// it, where the writer may stop.
//
// The hot path goes further: a ring's owner (ring.Owner) is a goroutine
// whose latest events are in that ring, whose record is written (seen)
// and which is not quiet (see errorID). A goroutine that owns the ring
// of the P it runs on takes its slots there at once, with no look at the
// seen and where tables; any other takes the slow path, which looks. A
// goroutine owns at most one ring: it is made owner after it takes slots
// in a P's ring (own), and is disowned when its events go to another
// ring (takeBarrier) and when another goroutine ends its span (span),
// which asks for a barrier before its next events. While it is quiet,
// its ring's owner bears the mark (quieten).
//
// The hot path in assembly (hotpath_amd64.s) finds the ring without the
// P's id: own keeps, by the goroutine's g, the ring it came to own last
// (owned) and, in the ring, the P's address; the assembly takes the
// goroutine's entry, a load beside the ones that read its P, and checks
// the ring's P and owner. A stale entry, or another goroutine's sharing
// it, fails the check and takes the slow path. The table is keyed by the
// g's address, not by the goroutine's id, which is one load further from
// the g: every load in that chain delays the event by its latency, and
// one fewer took 0.03-0.09x the floor off a traced call (README,
// Benchmarks). A g that another goroutine takes over after its own
// ended finds the ring's owner is not its goroutine.
//
// Under fullDrop, where an enter must be sure of its exit's slot, rings
// are chosen by goroutine id instead, as they were before (Reserve).

// Marks in the rings, which the writer reads and never encodes.
const (
	// markBarrier: the slot's Time is the barrier's number, shifted
	// left by prevBits, and the goroutine's previous ring plus one, 0
	// when it is not known (see barrierTime).
	markBarrier = tracewrite.RawMark
	// markUpto follows a barrier before another goroutine's span end:
	// its Time is a ring's index<<ring.PosBits and a position in that
	// ring, as far as the writer drains it first. Past it are the span's
	// goroutine's events after the end.
	markUpto = tracewrite.RawMark - 1
)

// prevBits holds a ring index plus one: maxRings is below 1<<prevBits.
const prevBits = 11

const _ = uint(1<<prevBits - 1 - maxRings) // does not compile if maxRings is too many

// barrierTime packs a barrier's number and the ring that its goroutine's
// events went to before it, prev, -1 if not known, into its slot's Time.
// The writer, resolving the barrier, drains that ring only: the events
// of the goroutine in rings before it are behind barriers in it, or
// drained.
func barrierTime(seq uint64, prev int) int64 { return int64(seq<<prevBits | uint64(prev+1)) }

// barrierOf unpacks what barrierTime packed.
func barrierOf(time int64) (seq uint64, prev int) {
	return uint64(time) >> prevBits, int(uint64(time)&(1<<prevBits-1)) - 1
}

// ownedKey is the entry of the owned table for the goroutine whose g is
// at address g, as the assembly computes it. A g is more than 1<<ownedShift
// bytes long, so the gs of goroutines alive together take distinct
// entries unless they lie more than (ownedMask+1)<<ownedShift bytes
// apart, and then they share one as goroutine ids that far apart do.
func ownedKey(g uintptr) uintptr { return g >> ownedShift & ownedMask }

const (
	ownedShift = 6
	ownedMask  = 1<<14 - 1
)

// whereBits is how many low bits of a where entry hold the ring (plus
// one, so that 0 is no entry); the goroutine is above them.
const whereBits = 16

// upto, when ring is above 0, asks claim for a barrier that limits the
// writer's draining of ring-1 to position pos; below 0, for a barrier
// alone.
type upto struct {
	ring int
	pos  uint64
}

// claim takes n slots for events of the calling goroutine g in the ring
// of the P it runs on, with a barrier first when g's earlier events went
// to another ring, or when lim asks. On success the goroutine stays
// pinned to the P until the caller has written the slots and called
// procUnpin. When the ring is full it fails, unpinned, and returns the
// ring, for waitRoom.
func (t *tracer) claim(g, n uint64, lim upto) (i int, pos uint64, ok bool) {
	i = min(procPin(), t.perP)
	if pos, ok = t.takeIn(i, g, n, lim); !ok {
		procUnpin()
	}
	return i, pos, ok
}

// latest reports whether ring i is where goroutine g's latest events
// went, as the where table says: then g's next events need no barrier.
func (t *tracer) latest(g uint64, i int) bool {
	return t.where[g&t.whereMask].Load() == g<<whereBits|uint64(i+1)
}

// takeIn is claim in ring i, for a caller that keeps the goroutine on the
// ring's P (or any P, in the shared ring) until it has written the slots.
func (t *tracer) takeIn(i int, g, n uint64, lim upto) (pos uint64, ok bool) {
	if !t.latest(g, i) || lim.ring != 0 {
		return t.takeBarrier(i, g, n, lim)
	}
	if i < t.perP {
		if pos, ok = t.rings[i].Take(n); ok {
			t.own(i, g)
		}
		return pos, ok
	}
	return t.rings[i].TakeShared(n)
}

// own makes goroutine g, which took slots in ring i, the ring's owner,
// if that ring is a P's and g is seen and not quiet; and keeps, for the
// assembly hot path, the P's address in the ring and the ring by g in
// the owned table. Its caller keeps g on the P.
func (t *tracer) own(i int, g uint64) {
	if i < t.perP && t.seen[g&t.seenMask].Load() == g {
		t.rings[i].SetP(gstate.P()) // the same P each time; for the assembly's check
		t.rings[i].Own(g)
		t.owned[ownedKey(gstate.G())].Store(&t.rings[i])
	}
}

// disown clears goroutine g as owner of any ring, quiet or not, so that
// its next events take the slow path.
func (t *tracer) disown(g uint64) {
	for i := range t.pRings {
		disownRing(&t.pRings[i], g)
	}
}

// disownRing clears goroutine g as owner of ring r, quiet or not.
func disownRing(r *ring.Ring, g uint64) {
	if o := r.Owner(); o&^quiet == g {
		r.SwapOwner(o, 0)
	}
}

// quieten marks goroutine g quiet in the ring it owns, if any, which
// leaves the hot path's test of the owner failing, and returns that
// ring, -1 for none, for unquieten.
func (t *tracer) quieten(g uint64) int {
	for i := range t.pRings {
		if t.pRings[i].SwapOwner(g, g|quiet) {
			return i
		}
	}
	return -1
}

// unquieten takes off the mark quieten put on ring i: g then owns the
// ring as before, unless it was disowned meanwhile.
func (t *tracer) unquieten(i int, g uint64) {
	if i >= 0 {
		t.pRings[i].SwapOwner(g|quiet, g)
	}
}

// takeBarrier is takeIn for events that need a barrier before them.
//
//go:noinline
func (t *tracer) takeBarrier(i int, g, n uint64, lim upto) (uint64, bool) {
	prev := -1 // g's previous ring, if the where table still says
	if e := t.where[g&t.whereMask].Load(); e>>whereBits == g {
		prev = int(e&(1<<whereBits-1)) - 1
	}
	s := &t.rings[i]
	extra := uint64(1)
	if lim.ring > 0 {
		extra++
	}
	// The number before the slots: in the shared ring, slots taken
	// after these by other goroutines come after it too.
	seq := t.barriers.Add(1)
	var pos uint64
	var ok bool
	if i < t.perP {
		pos, ok = s.Take(n + extra)
	} else {
		pos, ok = s.TakeShared(n + extra)
	}
	if !ok {
		return 0, false
	}
	// g's latest events go to ring i now: the one ring it may own is
	// prev, or, where the table no longer says, any.
	switch {
	case prev < 0:
		t.disown(g)
	case prev < t.perP:
		disownRing(&t.rings[prev], g)
	}
	if lim.ring > 0 {
		ring.Put(s.At(pos+1), markUpto, int64(uint64(lim.ring-1)<<ring.PosBits|lim.pos&(1<<ring.PosBits-1)))
	}
	if lim.ring < 0 {
		prev = -1 // a barrier that drains every ring
	}
	ring.Put(s.At(pos), markBarrier, barrierTime(seq, prev))
	t.where[g&t.whereMask].Store(g<<whereBits | uint64(i+1))
	t.own(i, g)
	return pos + extra, true
}

// claimWait is claim that waits while the ring is full, as fullWait says:
// the program slows down rather than lose events. It returns when the
// waits began and ended, in trace units, both 0 if it did not wait, and
// fails only when the trace is closing.
func (t *tracer) claimWait(g, n uint64, lim upto) (i int, pos uint64, from, to int64, ok bool) {
	for {
		if i, pos, ok = t.claim(g, n, lim); ok {
			return i, pos, from, to, true
		}
		began, ended, ok := t.waitRoom(i, n+2)
		if from == 0 {
			from = began
		}
		to = ended
		if !ok {
			return 0, 0, from, to, false
		}
	}
}

// ringOf returns the ring that goroutine g wrote its latest events to and
// its head, if the where table still says.
func (t *tracer) ringOf(g uint64) (upto, bool) {
	e := t.where[g&t.whereMask].Load()
	if e>>whereBits != g || e&(1<<whereBits-1) == 0 {
		return upto{}, false
	}
	i := int(e&(1<<whereBits-1)) - 1
	return upto{ring: i + 1, pos: t.rings[i].Head()}, true
}

// waitRoom blocks until ring i has room for n slots, while the writer
// makes room. It counts the wait and its time, and returns when it began
// and ended in trace units (at least 1), read beside the nanoseconds it
// counts, so that the waits the trace holds add up to what the run says
// it was held up. It gives up, reporting false, only when the trace is
// closing.
//
//go:noinline
func (t *tracer) waitRoom(i int, n uint64) (from, to int64, ok bool) {
	s, q := &t.rings[i], &t.waitqs[i]
	start := clock.Nanotime()
	from = max(clock.Now(), 1)
	q.mu.Lock()
	q.waiters.Add(1)
	for {
		if ok = s.Room(n); ok || t.stopping.Load() {
			break
		}
		t.w.wake()
		q.cond.Wait()
	}
	q.waiters.Add(-1)
	q.mu.Unlock()
	to = max(clock.Now(), from)
	s.Waits.Add(1)
	s.Held.Add(uint64(clock.Nanotime() - start))
	return from, to, ok
}

// whereTable makes the table of goroutines' latest rings, of
// whereMask+1 entries.
func whereTable() []atomic.Uint64 { return make([]atomic.Uint64, 1<<14) }
