package ring

import (
	"sync/atomic"
	"unsafe"

	"github.com/calltrail/calltrail/internal/tracewrite"
)

// A Slot holds one event as the writer's encoder takes it. Time is
// written first, then Word is published (see Put); a non-zero Word tells
// the writer the slot is complete. Word is never zero: goroutine ids start
// at 1. The writer zeroes consumed slots before it moves the ring's tail
// past them. A goroutine record takes three slots: the goroutine and the
// time; its parent and the pc of the go statement; and the pc it started
// at.
type Slot = tracewrite.Raw

// state packs a ring's head (the next slot to hand out, 40 bits that wrap)
// with the number of exits owed: slots promised to calls whose enter is in
// the ring (by Reserve).
const (
	owedBits = 24
	owedMask = 1<<owedBits - 1
	headMask = 1<<PosBits - 1
)

// PosBits is the width of ring positions (Head, Readable's tail), which
// wrap.
const PosBits = 40

// Dist returns how many positions b is past a.
func Dist(a, b uint64) uint64 { return (b - a) & headMask }

// Reached reports whether position pos is at or past p, positions that
// are never half their range apart.
func Reached(pos, p uint64) bool { return Dist(p, pos) < 1<<(PosBits-1) }

// A Ring is a ring of slots shared by the goroutines whose id maps to it.
// All events of one goroutine go to one ring, in order, so the writer
// never has to merge. Many goroutines write a ring; one reads it. The
// fields written by the writers and by the reader sit on separate cache
// lines.
//
// The struct is three whole cache lines, so that in an array of rings no
// ring's busy line is shared with its neighbour's: the writers' head and
// owner on one line, the reader's tail and the slow path's counters on
// the second, and read-only fields on the third.
type Ring struct {
	state atomic.Uint64
	owner atomic.Uint64  // see Owner
	p     atomic.Uintptr // see SetP
	_     [48 - unsafe.Sizeof(uintptr(0))]byte
	tail  atomic.Uint64 // next slot the reader reads; written by the reader only
	// Counters of the program's writers, kept here for their cache
	// line.
	Dropped    atomic.Uint64 // calls refused because the ring was full
	Waits      atomic.Uint64 // times a goroutine waited for room
	Held       atomic.Uint64 // nanoseconds goroutines waited for room
	LostErrors atomic.Uint64 // errors of recorded calls left out for want of room
	_          [24]byte
	slots      []Slot
	mask       uint64
	size       uint64
	_          [48 - unsafe.Sizeof([]Slot(nil))]byte // 24 where a slice is 24 bytes, 36 where it is 12
}

// The layout of Ring and Slot, for calltrail's hot path in assembly, which
// does what Owner, Take, At and Put do, in that order.
const (
	Size        = unsafe.Sizeof(Ring{})
	StateOffset = unsafe.Offsetof(Ring{}.state)
	OwnerOffset = unsafe.Offsetof(Ring{}.owner)
	POffset     = unsafe.Offsetof(Ring{}.p)
	TailOffset  = unsafe.Offsetof(Ring{}.tail)
	SlotsOffset = unsafe.Offsetof(Ring{}.slots)
	MaskOffset  = unsafe.Offsetof(Ring{}.mask)
	SizeOffset  = unsafe.Offsetof(Ring{}.size)
	HeadShift   = owedBits // state holds the head from this bit up
	HeadMask    = headMask
	SlotSize    = unsafe.Sizeof(Slot{})
	SlotWord    = unsafe.Offsetof(Slot{}.Word)
	SlotTime    = unsafe.Offsetof(Slot{}.Time)
)

// New returns a ring of size slots, a power of two.
func New(size int) Ring {
	return Ring{slots: make([]Slot, size), mask: uint64(size - 1), size: uint64(size)}
}

// Take takes the next n slots for the ring's only writer: a ring written
// by one goroutine at a time, such as the goroutine running on the P the
// ring belongs to, pinned to it. It takes them without an atomic
// read-modify-write, which costs, on some hosts, a third of a traced
// call. It fails, taking nothing, when the ring has no room for them. A
// ring is used with Take, with TakeShared or with Reserve, not two of
// them.
func (r *Ring) Take(n uint64) (pos uint64, ok bool) {
	head := loadState(&r.state) >> owedBits
	if (head+n-r.tail.Load())&headMask > r.size {
		return 0, false
	}
	storeState(&r.state, (head+n)&headMask<<owedBits)
	return head, true
}

// Owner returns the ring's owner, as the ring's user last set it (Own,
// SwapOwner), 0 for none: the user keeps there what its writer needs to
// know to take slots at once (for calltrail, that the goroutine's latest
// events are in this ring), on the cache line Take reads anyway.
func (r *Ring) Owner() uint64 { return r.owner.Load() }

// Own sets the ring's owner.
func (r *Ring) Own(g uint64) { r.owner.Store(g) }

// SetP keeps p for the ring's user: for calltrail, the address of the
// runtime's P whose ring it is, which its assembly hot path compares with
// the P it runs on (at POffset), on the cache line Take reads anyway.
func (r *Ring) SetP(p uintptr) { r.p.Store(p) }

// SwapOwner sets the ring's owner to new if it is old, and reports
// whether it was. It writes the ring's busy line only then.
func (r *Ring) SwapOwner(old, new uint64) bool {
	return r.owner.Load() == old && r.owner.CompareAndSwap(old, new)
}

// TakeShared is Take for a ring that any goroutine may write, with a
// compare-and-swap.
func (r *Ring) TakeShared(n uint64) (pos uint64, ok bool) {
	return r.Reserve(n, 0)
}

// Room reports whether the ring has room for n more slots: whether Take
// or TakeShared would take them now.
func (r *Ring) Room(n uint64) bool {
	st := r.state.Load()
	return (st>>owedBits-r.tail.Load())&headMask+st&owedMask+n <= r.size
}

// Reserve claims n consecutive slots to write now and promises owe more
// for later (ClaimOwed). It fails, without blocking, when the ring cannot
// hold them all.
func (r *Ring) Reserve(n, owe uint64) (pos uint64, ok bool) {
	tail := r.tail.Load()
	for {
		st := r.state.Load()
		head := st >> owedBits
		if (head-tail)&headMask+st&owedMask+n+owe > r.size {
			return 0, false
		}
		if r.state.CompareAndSwap(st, st+n<<owedBits+owe) {
			return head, true
		}
	}
}

// ClaimOwed takes a slot promised by Reserve.
func (r *Ring) ClaimOwed() *Slot {
	st := r.state.Add(1<<owedBits - 1)
	return &r.slots[(st>>owedBits-1)&r.mask]
}

// At returns the slot at position pos.
func (r *Ring) At(pos uint64) *Slot { return &r.slots[pos&r.mask] }

// Put completes a slot: its time, then its word, published.
func Put(sl *Slot, word uint64, ts int64) {
	sl.Time = ts
	publish(&sl.Word, word)
}

// Load reads a slot's word, pairing with Put.
func Load(sl *Slot) uint64 { return atomic.LoadUint64(&sl.Word) }

// Pending reports whether slots have been handed out that the reader has
// not consumed.
func (r *Ring) Pending() bool {
	return (r.state.Load()>>owedBits-r.tail.Load())&headMask != 0
}

// Head returns the position of the next slot to be handed out.
func (r *Ring) Head() uint64 { return r.state.Load() >> owedBits & headMask }

// Readable returns the reader's tail and how many slots from it have
// been handed out: some may not be written yet (their word is zero).
func (r *Ring) Readable() (tail, n uint64) {
	tail = r.tail.Load()
	return tail, min((r.state.Load()>>owedBits-tail)&headMask, r.size)
}

// Run returns the slots from pos on, at most n, up to the ring's end.
func (r *Ring) Run(pos, n uint64) []Slot {
	i := pos & r.mask
	return r.slots[i : i+min(n, r.size-i)]
}

// Release hands back the slots from the tail up to pos, once read: it
// zeroes them, then moves the tail, which the writers load atomically
// before they use a slot again.
func (r *Ring) Release(pos uint64) {
	tail := r.tail.Load()
	i, j := tail&r.mask, pos&r.mask
	switch {
	case pos == tail:
		return
	case i < j:
		clear(r.slots[i:j])
	default:
		clear(r.slots[i:])
		clear(r.slots[:j])
	}
	r.tail.Store(pos)
}

var _ [0]struct{} = [unsafe.Sizeof(Ring{}) % 64]struct{}{} // Ring is whole cache lines

// Skip abandons every slot handed out: the tail moves to the head, and
// the slots keep what they hold. Only where no reader runs, and the slots
// are not to be read: benchmarks of the writers stand in for the reader
// with it, at no cost of their own.
func (r *Ring) Skip() {
	r.tail.Store(r.state.Load() >> owedBits & headMask)
}

// Len returns the number of slots of the ring.
func (r *Ring) Len() int { return len(r.slots) }
