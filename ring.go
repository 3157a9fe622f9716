package calltrail

import (
	"sync/atomic"
	"unsafe"
)

// A Call names one recorded call from Enter to Exit: the goroutine in the
// high bits and the function id in the low fidBits. The zero Call means
// the call is not recorded (tracing off, or the buffers were full), and
// its Exit does nothing.
type Call uint64

const (
	fidBits = 22
	fidMask = 1<<fidBits - 1
	maxFid  = fidMask
)

// Kinds of slot, in the low three bits of a slot's first word.
const (
	kEnter     = 0
	kExit      = 1
	kPanic     = 2
	kGoexit    = 3
	kGoroutine = 4 // three slots: the goroutine, its parent and gopc, its startpc
)

// A slot holds one event. w1 is written first, then w0 is published (see
// publish); a non-zero w0 tells the writer the slot is complete. w0 is
// Call<<3 | kind, never zero because goroutine ids start at 1. The writer
// zeroes consumed slots before it moves the shard's tail past them.
type slot struct {
	w0 uint64
	w1 int64
}

// state packs a shard's head (the next slot to hand out, 40 bits that wrap)
// with the number of exits owed: slots promised to calls whose enter is in
// the ring. An enter is admitted only if its exit's slot can be promised
// too, so a recorded call always gets its exit, and a full ring drops
// whole calls.
const (
	owedBits = 24
	owedMask = 1<<owedBits - 1
	headMask = 1<<40 - 1
)

// A shard is a ring of slots shared by the goroutines whose id maps to
// it. All events of one goroutine go to one shard, in order, so the writer
// never has to merge. The fields written by the hot path and by the writer
// sit on separate cache lines.
//
// The struct is three whole cache lines, so that in an array of shards no
// shard's busy line is shared with its neighbour's: the hot path's CAS on
// one line, the writer's tail on the second, and read-only fields on the
// third.
type shard struct {
	state   atomic.Uint64
	_       [56]byte
	tail    atomic.Uint64 // next slot the writer reads; written by the writer only
	dropped atomic.Uint64 // calls refused because the ring was full
	_       [48]byte
	slots   []slot
	mask    uint64
	size    uint64
	_       [24]byte
}

func newShard(size int) shard {
	return shard{slots: make([]slot, size), mask: uint64(size - 1), size: uint64(size)}
}

// reserve claims n consecutive slots to write now and promises owe more
// for later exits. It fails, without blocking, when the ring cannot hold
// them.
func (s *shard) reserve(n, owe uint64) (pos uint64, ok bool) {
	tail := s.tail.Load()
	for {
		st := s.state.Load()
		head := st >> owedBits
		if (head-tail)&headMask+st&owedMask+n+owe > s.size {
			return 0, false
		}
		if s.state.CompareAndSwap(st, st+n<<owedBits+owe) {
			return head, true
		}
	}
}

// claimOwed takes the slot promised to an exit.
func (s *shard) claimOwed() *slot {
	st := s.state.Add(1<<owedBits - 1)
	return &s.slots[(st>>owedBits-1)&s.mask]
}

// put completes a slot.
func (sl *slot) put(w0 uint64, w1 int64) {
	sl.w1 = w1
	publish(&sl.w0, w0)
}

// load reads a slot's first word, pairing with publish.
func (sl *slot) load() uint64 { return atomic.LoadUint64(&sl.w0) }

// pending reports whether slots have been handed out that the writer has
// not consumed.
func (s *shard) pending() bool {
	return (s.state.Load()>>owedBits-s.tail.Load())&headMask != 0
}

var _ [0]struct{} = [unsafe.Sizeof(shard{}) % 64]struct{}{} // shard is whole cache lines
