package tracewrite

import (
	"encoding/binary"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/wire"
)

// Raw is an event as the runtime records it in its rings, before
// encoding: the input of Batch.AppendRaw. Word is the goroutine id in the
// bits from RawOpBits up and, below them, the event's op as the events
// chunk encodes it (see RawEnter and RawExit); Time is in trace clock
// units.
//
// The runtime writes two words per event on its hot path and leaves all
// encoding to its background writer; AppendRaw is that writer's inner
// loop, encoding many events per call with few branches.
type Raw struct {
	Word uint64
	Time int64
}

// RawOpBits is how many low bits of Raw.Word hold the op: function ids
// are below 1<<(RawOpBits-2).
const RawOpBits = 24

// RawOpMask selects the op of a Raw.Word.
const RawOpMask = 1<<RawOpBits - 1

// RawGoroutineOp is the op of a goroutine record, which the runtime
// encodes itself (Batch.Goroutine) and which stops AppendRaw.
const RawGoroutineOp = wire.ExtGoroutine<<2 | wire.OpExt

// RawMark is a Raw.Word that is no event: AppendRaw stops at it and at
// any other word of goroutine 0, for the caller to read. The runtime
// marks its rings with them; they are never encoded.
const RawMark = 1<<RawOpBits - 1

// RawEnter returns the Raw.Word of goroutine g entering function fn.
func RawEnter(g uint64, fn uint32) uint64 { return g<<RawOpBits | uint64(fn)<<2 | wire.OpEnter }

// RawError returns the Raw.Word of goroutine g's innermost call returning
// error id (1 to wire.MaxErrorID) of the error table: it goes just before the
// call's exit, with the exit's time.
func RawError(g uint64, id uint32) uint64 { return g<<RawOpBits | uint64(id)<<2 | wire.OpExt }

// RawHeld returns the Raw.Word of goroutine g starting (to false) or
// ending (to true) a wait for the trace writer, with the time it did: the
// two go together, after the event whose recording waited.
func RawHeld(g uint64, to bool) uint64 {
	if to {
		return g<<RawOpBits | wire.ExtHeldTo<<2 | wire.OpExt
	}
	return g<<RawOpBits | wire.ExtHeldFrom<<2 | wire.OpExt
}

// RawSpan returns the Raw.Word of goroutine g starting (end false) or
// ending (end true) a span, with the time it did; the span's id follows
// in the next slot, as RawSpanID's bits.
func RawSpan(g uint64, end bool) uint64 {
	if end {
		return g<<RawOpBits | wire.ExtSpanEnd<<2 | wire.OpExt
	}
	return g<<RawOpBits | wire.ExtSpanStart<<2 | wire.OpExt
}

// RawSpanID returns the Raw.Word of the span id after a RawSpan event:
// its Time holds the id's eight bytes, little endian, as a value's bits.
func RawSpanID(g uint64) uint64 {
	return g<<RawOpBits | (wire.ExtValue+wire.ValueSpan<<1)<<2 | wire.OpExt
}

// RawExit returns the Raw.Word of goroutine g leaving its innermost call.
func RawExit(g uint64, k records.ExitKind) uint64 { return g<<RawOpBits | uint64(k)<<2 | wire.OpExit }

// EarliestRaw returns the earliest time of the events of raw that carry
// one, and false if none does. A value's Time holds the value, and a
// goroutine record's is not in raw as AppendRaw leaves it: the others'
// is when the event happened.
func EarliestRaw(raw []Raw) (t int64, ok bool) {
	t = math.MaxInt64
	for i := range raw {
		op := raw[i].Word & RawOpMask
		if op&3 == wire.OpExt && (op>>2 == wire.ExtGoroutine || op>>2 >= wire.ExtValue) {
			continue
		}
		t, ok = min(t, raw[i].Time), true
	}
	return t, ok
}

// maxRawEvent bounds the bytes one raw event takes: a goroutine switch,
// an op and a time delta, each a uvarint of at most ten bytes.
const maxRawEvent = 3 * binary.MaxVarintLen64

// rawBlock is how many events AppendRaw encodes between two checks of the
// buffer's capacity.
const rawBlock = 256

// AppendRaw encodes the events of raw into b, in order, up to the first
// goroutine record, the first word of goroutine 0, or the end of raw, and
// returns how many it encoded. A goroutine record stops it for the caller
// to encode with Batch.Goroutine. A word of goroutine 0 is a slot not yet
// written (a zero Word) or one the caller uses for itself (RawMark).
//
// raw may be a ring that other goroutines are writing: AppendRaw reads
// each Word atomically before the Time beside it, so a writer that stores
// Time and then Word (atomically, or with a store that keeps its order,
// as amd64's do) is seen whole or not at all.
//
// It writes the same bytes as Enter and Exit would, several times faster:
// most events go through encodeRun, a loop without calls whose state
// lives in registers and which writes each field without branching on
// its length.
func (b *Batch) AppendRaw(raw []Raw) int {
	done := 0
	for done < len(raw) {
		m := min(len(raw)-done, rawBlock)
		if cap(b.buf)-len(b.buf) < m*maxRawEvent+8 {
			b.buf = append(b.buf, make([]byte, m*maxRawEvent+8+len(b.buf))...)[:len(b.buf)]
		}
		buf := b.buf[:cap(b.buf)]
		end := done + m
		start, enters := done, b.enters
		for done < end {
			if b.g != 0 {
				n, o, last, enters := encodeRun(buf, len(b.buf), raw[done:end], b.last, b.g)
				b.buf = b.buf[:o]
				b.n += n
				b.enters += enters
				b.last = last
				done += n
				if done == end {
					break
				}
			}
			// encodeRun stopped at an event it leaves to the general
			// encoder: another goroutine, a field of more than three
			// bytes, a goroutine record, or a slot not yet written.
			w := atomic.LoadUint64(&raw[done].Word)
			op := w & RawOpMask
			if w < 1<<RawOpBits || op == RawGoroutineOp {
				b.count(raw[start:done], enters)
				return done
			}
			b.put(w>>RawOpBits, op, raw[done].Time)
			if op&3 == wire.OpEnter {
				b.enters++
			}
			done++
		}
		b.count(raw[start:done], enters) // while the block is in cache
	}
	return done
}

// count counts raw, just encoded, in b.Totals, if set: b had counted
// enters enters before them.
func (b *Batch) count(raw []Raw, enters int) {
	if b.Totals != nil {
		b.Totals.Calls += uint64(b.enters - enters)
		b.Totals.CountRaw(raw)
	}
}

// encodeRunGeneric encodes the leading events of raw that are enters and exits
// of goroutine g, which is not 0, with fields below 1<<21 into buf at o,
// and returns how many it encoded, the offset after them, the last
// event's time and the number of enters. buf must have room for them all,
// and eight bytes more. A slot not yet written stops it as another
// goroutine's event does: its word, 0, is not g's.
//
// Each event is its op and its zigzag time delta, uvarints of one to three
// bytes, encoded without a branch on their lengths. Most events of a busy
// program have both fields below 1<<14: those go two at a time, their four
// fields side by side in one word (see quad); the others one at a time
// (see pair). It is encodeRun, in Go.
func encodeRunGeneric(buf []byte, o int, raw []Raw, last int64, g uint64) (n, end int, t int64, enters int) {
	if len(raw) == 0 || cap(buf)-o < len(raw)*6+8 {
		return 0, o, last, 0
	}
	// The loop works on pointers, not slices: with bounds checks and
	// the slices' lengths and capacities in play, the compiler keeps
	// too few of its values in registers.
	gw := g << RawOpBits
	var exits uint64
	in := unsafe.Pointer(unsafe.SliceData(raw))
	out := unsafe.Pointer(unsafe.SliceData(buf))
	i := 0
	for i < len(raw) {
		r := (*Raw)(unsafe.Add(in, uintptr(i)*unsafe.Sizeof(Raw{})))
		// The word less the goroutine is the op, if the event is g's;
		// otherwise it is at least 1<<RawOpBits, too long for the fast
		// paths.
		op := atomic.LoadUint64(&r.Word) ^ gw
		if i+1 < len(raw) {
			r2 := (*Raw)(unsafe.Add(unsafe.Pointer(r), unsafe.Sizeof(Raw{})))
			op2 := atomic.LoadUint64(&r2.Word) ^ gw
			if op|op2 < 1<<14 && op != RawGoroutineOp && op2 != RawGoroutineOp {
				d := r.Time - last
				d2 := r2.Time - r.Time
				z := uint64(d<<1) ^ uint64(d>>63)
				z2 := uint64(d2<<1) ^ uint64(d2>>63)
				if z|z2 < 1<<14 {
					last = r2.Time
					exits += op&wire.OpExit + op2&wire.OpExit // an exit's op is odd, an enter's even
					s, c := quad(op | z<<16 | op2<<32 | z2<<48)
					// Four overlapping stores, each field's
					// bytes written over the previous store's
					// spare ones.
					put64(unsafe.Add(out, o), s)
					o += 1 + int(c>>14&1)
					put64(unsafe.Add(out, o), s>>16)
					o += 1 + int(c>>30&1)
					put64(unsafe.Add(out, o), s>>32)
					o += 1 + int(c>>46&1)
					put64(unsafe.Add(out, o), s>>48)
					o += 1 + int(c>>62)
					i += 2
					continue
				}
			}
		}
		if op >= 1<<21 || op == RawGoroutineOp {
			break // the time of a slot not yet written is not to be read
		}
		d := r.Time - last
		z := uint64(d<<1) ^ uint64(d>>63)
		if z >= 1<<21 {
			break
		}
		last = r.Time
		exits += op & wire.OpExit
		x, xn := pair(op | z<<24)
		put64(unsafe.Add(out, o), x)
		o += int(xn)
		i++
	}
	return i, o, last, i - int(exits)
}

// quad encodes the four values below 1<<14 in the 16-bit lanes of w as
// uvarints of one or two bytes, each in the low bytes of its lane of s,
// and returns s and, in bit 14 of each lane of c, whether the lane's
// uvarint has a second byte. Adding 1<<14 less 1<<7 to a lane carries
// into its bit 14 exactly when it has bits above the first seven; adding
// those bits to themselves moves them up one, a byte from the first
// seven.
func quad(w uint64) (s, c uint64) {
	const lanes = 0x0001_0001_0001_0001
	c = (w + (1<<14-1<<7)*lanes) & (1 << 14 * lanes)
	return w + w&(0x3f80*lanes) | c>>7, c
}

// pair encodes the two values below 1<<21 in the low and the high half of
// w (bits 0-20 and 24-44) as consecutive uvarints of one to three bytes
// each, in the low bytes of x, and returns x and their length, without a
// branch on the lengths. Both halves are worked on at once: the seven-bit
// groups of each are spread a byte apart; adding 1<<21 less a group's
// weight carries into bit 21 (45 for the high half) exactly when the
// value has bits in that group or above, which gives each byte followed by
// another its continuation bit and counts the bytes; the high half's
// bytes are then moved down to follow the low half's.
func pair(w uint64) (x, n uint64) {
	c1 := (w + pairK1) & pairBit // the half has a second byte
	c2 := (w + pairK2) & pairBit // and a third
	s := w + w&^pairLo7 + w&(pairLo7<<14)<<1 | c1>>14 | c2>>6
	cnt := (c1 + c2) >> 21 // the low half's extra bytes in bits 0-1, the high half's in 24-25
	ln := cnt&3 + 1
	return s&(1<<24-1) | s>>24<<(8*ln), ln + cnt>>24 + 1
}

const (
	pairLo7 = 0x7f | 0x7f<<24               // the first group of each half
	pairK1  = (1<<21 - 1<<7) * (1 | 1<<24)  // carries when a half has a second group
	pairK2  = (1<<21 - 1<<14) * (1 | 1<<24) // and a third
	pairBit = 1<<21 | 1<<45                 // where those carries land
)
