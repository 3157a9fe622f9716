package calltrail

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/calltrail/calltrail/tracefile"
)

// A Call names one recorded call from Enter to Exit. Its low bits are the
// word of the call's enter event (see tracefile.Raw): the goroutine from
// bit opBits up, the function id shifted left by two below. Its top two
// bits are flags. The zero Call means the call is not recorded (tracing
// off, or the call dropped), and its Exit does nothing.
type Call uint64

const (
	opBits  = tracefile.RawOpBits
	fidMask = 1<<(opBits-2) - 1
	maxFid  = fidMask

	// gBits is how many bits of a goroutine id a Call keeps.
	gBits = 62 - opBits
	gMask = 1<<gBits - 1

	// callRoot marks a goroutine's first traced call: a panic that
	// leaves it may end the program (see tracer.fatal).
	callRoot Call = 1 << 63
	// callMain marks a call of main.main: when the main goroutine
	// leaves it, the program ends.
	callMain Call = 1 << 62
	// callG selects the goroutine of a Call.
	callG Call = gMask << opBits
)

// newCall makes the Call of goroutine g entering function id, as Func
// keeps ids (with the idMain flag).
func newCall(g uint64, id uint32) Call {
	return Call(tracefile.RawEnter(g, id&fidMask)) | Call(id&idMain)<<(62-idMainBit)
}

// word returns the event word of the call's enter.
func (c Call) word() uint64 { return uint64(c &^ (callRoot | callMain)) }

// exitWord returns the event word of the call's exit of the given kind.
func (c Call) exitWord(k tracefile.ExitKind) uint64 {
	return tracefile.RawExit(c.goroutine(), k)
}

// goroutine returns the goroutine that made the call.
func (c Call) goroutine() uint64 { return uint64(c&callG) >> opBits }

// A slot holds one event as the writer's encoder takes it. Time is
// written first, then Word is published (see publish); a non-zero Word
// tells the writer the slot is complete. Word is never zero: goroutine ids
// start at 1. The writer zeroes consumed slots before it moves the
// shard's tail past them. A goroutine record takes three slots: the
// goroutine and the time; its parent and the pc of the go statement; and
// the pc it started at.
type slot = tracefile.Raw

// What a goroutine does when its ring is full.
type fullPolicy uint8

const (
	// fullWait: the goroutine waits until the writer has made room, so
	// no call is lost; the time it waits is counted.
	fullWait fullPolicy = iota
	// fullDrop: the call is dropped, whole, and counted; the program
	// never waits. An enter is admitted only if the slot of its exit
	// can be promised too.
	fullDrop
	// A third policy, overwriting the oldest events, fits here: its
	// full handler moves the tail itself instead of waiting for the
	// writer, and, as with fullWait, exits reserve their own slots.
)

// state packs a shard's head (the next slot to hand out, 40 bits that wrap)
// with the number of exits owed: slots promised to calls whose enter is in
// the ring (fullDrop only). Under fullWait the head may run up to a ring
// ahead of the tail, over slots claimed by goroutines waiting for them.
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
// one line, the writer's tail and the slow path's counters on the second,
// and read-only fields on the third.
type shard struct {
	state   atomic.Uint64
	_       [56]byte
	tail    atomic.Uint64 // next slot the writer reads; written by the writer only
	dropped atomic.Uint64 // calls refused because the ring was full
	waits   atomic.Uint64 // times a goroutine waited for room
	held    atomic.Uint64 // nanoseconds goroutines waited for room
	_       [32]byte
	slots   []slot
	mask    uint64
	size    uint64
	_       [24]byte
}

func newShard(size int) shard {
	return shard{slots: make([]slot, size), mask: uint64(size - 1), size: uint64(size)}
}

// claim takes the next n slots under fullWait, with one atomic add and
// whether or not the ring has room: full reports that the slots' previous
// occupants may not be consumed yet, and the caller must wait (see
// tracer.waitFree) before it writes them. The writer consumes slots in
// order, and the slot at its tail is never one whose owner waits, so
// every claim is served in turn.
func (s *shard) claim(n uint64) (pos uint64, full bool) {
	pos = (s.state.Add(n<<owedBits)>>owedBits - n) & headMask
	return pos, (pos+n-s.tail.Load())&headMask > s.size
}

// free reports whether the slots before pos+n are all consumed from the
// previous lap, so that those up to it can be written.
func (s *shard) free(pos, n uint64) bool {
	return (pos+n-s.tail.Load())&headMask <= s.size
}

// reserve claims n consecutive slots to write now and promises owe more
// for later exits, under fullDrop. It fails, without blocking, when the
// ring cannot hold them.
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
func put(sl *slot, word uint64, ts int64) {
	sl.Time = ts
	publish(&sl.Word, word)
}

// load reads a slot's word, pairing with publish.
func load(sl *slot) uint64 { return atomic.LoadUint64(&sl.Word) }

// pending reports whether slots have been handed out that the writer has
// not consumed.
func (s *shard) pending() bool {
	return (s.state.Load()>>owedBits-s.tail.Load())&headMask != 0
}

// waitq is where goroutines wait for room in one shard. The writer
// broadcasts after each pass over the rings while anyone waits.
type waitq struct {
	waiters atomic.Int32
	mu      sync.Mutex
	cond    sync.Cond
}

var _ [0]struct{} = [unsafe.Sizeof(shard{}) % 64]struct{}{} // shard is whole cache lines
