package replay

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"github.com/calltrail/calltrail/internal/gtable"
)

// spillCalls is how many calls Write keeps in memory while it reads, 64
// MiB of them: past it, blocks of calls go to a temporary file until
// they are printed, the oldest full block or idle goroutine's last block
// first. The output groups calls by goroutine, so the calls of every
// goroutine are kept until the trace is read: held in memory, the 30
// million calls of fib(35) took 493 MB.
var spillCalls = 1 << 22

// spill holds the blocks of calls Write has let go of, in a temporary
// file made at the first.
type spill struct {
	f        *os.File
	end      int64      // the file's size
	err      error      // the first error writing or reading the file
	resident int        // calls in blocks in memory
	refs     []blockRef // blocks that may go, oldest first
	head     int        // refs[head:] are still to go
	// blocks are empty blocks of 1<<blockBits calls, to fill again: let
	// go to the file while the trace is read, and printed after, on the
	// goroutine that writes the pieces.
	blocks chan []call
}

func newSpill() *spill { return &spill{blocks: make(chan []call, 16)} }

// spilled counts the blocks written to spill files, for the tests.
var spilled atomic.Int64

// A blockRef names block k of goroutine id's calls.
type blockRef struct {
	id uint64
	k  int
}

const callBytes = int(unsafe.Sizeof(call{}))

// queue notes that cs's last block, of goroutine id, may go to the file:
// it is full, or the goroutine has no call open.
func (sp *spill) queue(cs *calls, id uint64) {
	if k := len(cs.rest) - 1; k >= cs.queued {
		sp.refs = append(sp.refs, blockRef{id, k})
		cs.queued = k + 1
	}
}

// trim sends blocks to the file, oldest first, until spillCalls are left
// in memory.
func (sp *spill) trim(gs *gtable.Table[goroutine]) {
	for sp.resident > spillCalls && sp.head < len(sp.refs) && sp.err == nil {
		ref := sp.refs[sp.head]
		sp.head++
		if cs := &gs.Get(ref.id).calls; cs.rest[ref.k] != nil {
			sp.out(cs, ref.k)
		}
	}
	if sp.head >= 1024 && sp.head*2 >= len(sp.refs) {
		sp.refs = sp.refs[:copy(sp.refs, sp.refs[sp.head:])]
		sp.head = 0
	}
}

// out writes block k of cs to the file and lets it go.
func (sp *spill) out(cs *calls, k int) {
	if sp.f == nil {
		f, err := os.CreateTemp("", "calltrail-replay-")
		if err != nil {
			sp.err = fmt.Errorf("keeping calls in a temporary file (TMPDIR names another directory): %w", err)
			return
		}
		sp.f = f
		// Gone once closed, or when the program ends, where the
		// system lets an open file be removed; else close removes it.
		os.Remove(f.Name())
	}
	b := cs.rest[k]
	if _, err := sp.f.WriteAt(callBytesOf(b), sp.end); err != nil {
		sp.err = fmt.Errorf("keeping calls in a temporary file: %w", err)
		return
	}
	for len(cs.spilled) <= k {
		cs.spilled = append(cs.spilled, -1)
	}
	cs.spilled[k] = sp.end
	sp.end += int64(len(b) * callBytes)
	sp.resident -= len(b)
	cs.rest[k] = nil
	spilled.Add(1)
	if cap(b) == 1<<blockBits {
		sp.reuse(b)
	}
}

// blockLen is how many calls block k of cs holds.
func blockLen(cs *calls, k int) int { return min(1<<blockBits, cs.n-1-k<<blockBits) }

// read reads block k of cs from the file into b, which it returns.
func (sp *spill) read(cs *calls, k int, b []call) []call {
	b = b[:blockLen(cs, k)]
	if _, err := sp.f.ReadAt(callBytesOf(b), cs.spilled[k]); err != nil {
		sp.err = fmt.Errorf("reading calls back from a temporary file: %w", err)
		return nil
	}
	return b
}

// back brings block k of cs, the last, back from the file for its
// goroutine's next call, which goes in it.
func (sp *spill) back(cs *calls, k int) {
	b := sp.read(cs, k, sp.block())
	if b == nil {
		b = make([]call, blockLen(cs, k), 1<<blockBits) // what Write returns says why
	}
	cs.rest[k], cs.spilled[k] = b, -1
	cs.queued = min(cs.queued, k)
	sp.resident += len(b)
}

// in makes block k of cs, which is in the file, held in memory again,
// for printing.
func (sp *spill) in(cs *calls, k int) { cs.rest[k] = sp.read(cs, k, sp.block()) }

// block returns an empty block of 1<<blockBits calls.
func (sp *spill) block() []call {
	select {
	case b := <-sp.blocks:
		return b[:0]
	default:
		return make([]call, 0, 1<<blockBits)
	}
}

// reuse takes back a block of 1<<blockBits calls no longer needed.
func (sp *spill) reuse(b []call) {
	select {
	case sp.blocks <- b:
	default:
	}
}

// slot returns call i of cs to change: in its block, or a copy of it
// read from the file, which put writes back.
func (sp *spill) slot(cs *calls, i int, scratch *call) *call {
	if i == 0 || cs.rest[(i-1)>>blockBits] != nil {
		return cs.at(i)
	}
	if _, err := sp.f.ReadAt(callBytesOf(unsafe.Slice(scratch, 1)), sp.offset(cs, i)); err != nil && sp.err == nil {
		sp.err = fmt.Errorf("reading calls back from a temporary file: %w", err)
	}
	return scratch
}

// put writes back call i of cs, which slot gave, if it is in the file.
func (sp *spill) put(cs *calls, i int, c *call) {
	if i == 0 || cs.rest[(i-1)>>blockBits] != nil {
		return
	}
	if _, err := sp.f.WriteAt(callBytesOf(unsafe.Slice(c, 1)), sp.offset(cs, i)); err != nil && sp.err == nil {
		sp.err = fmt.Errorf("keeping calls in a temporary file: %w", err)
	}
}

// callBytesOf returns the bytes of calls, as they go to the file: the
// file is read back by the process that wrote it, so its calls are
// stored as they are in memory, with no copy.
func callBytesOf(cs []call) []byte {
	if len(cs) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&cs[0])), len(cs)*callBytes)
}

func (sp *spill) offset(cs *calls, i int) int64 {
	k := (i - 1) >> blockBits
	return cs.spilled[k] + int64((i-1)&(1<<blockBits-1)*callBytes)
}

// load makes the blocks of calls lo to hi-1 of cs held in memory, for
// printing, and returns the error reading them.
func (sp *spill) load(cs *calls, lo, hi int) error {
	if cs.spilled == nil || hi <= 1 {
		return nil
	}
	for k := (max(lo, 1) - 1) >> blockBits; k <= (hi-2)>>blockBits && sp.err == nil; k++ {
		if cs.rest[k] == nil {
			sp.in(cs, k)
		}
	}
	return sp.err
}

// release lets go of the blocks of cs that load read back and that hold
// only calls before lo, printed, for load to read others into. It is
// called as pieces are written, while load makes the next.
func (sp *spill) release(cs *calls, lo int) {
	for ; cs.printed < len(cs.spilled) && (cs.printed+1)<<blockBits < lo; cs.printed++ {
		if b := cs.rest[cs.printed]; b != nil && cs.spilled[cs.printed] >= 0 {
			sp.reuse(b)
			cs.rest[cs.printed] = nil
		}
	}
}

// close removes the file.
func (sp *spill) close() {
	if sp.f != nil {
		sp.f.Close()
		os.Remove(sp.f.Name())
	}
}
