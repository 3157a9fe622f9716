package tracefile

import (
	"encoding/binary"
	"sync/atomic"
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
const RawGoroutineOp = extGoroutine<<2 | opExt

// RawEnter returns the Raw.Word of goroutine g entering function fn.
func RawEnter(g uint64, fn uint32) uint64 { return g<<RawOpBits | uint64(fn)<<2 | opEnter }

// RawExit returns the Raw.Word of goroutine g leaving its innermost call.
func RawExit(g uint64, k ExitKind) uint64 { return g<<RawOpBits | uint64(k)<<2 | opExit }

// maxRawEvent bounds the bytes one raw event takes: a goroutine switch,
// an op and a time delta, each a uvarint of at most ten bytes.
const maxRawEvent = 3 * binary.MaxVarintLen64

// rawBlock is how many events AppendRaw encodes between two checks of the
// buffer's capacity.
const rawBlock = 256

// AppendRaw encodes the events of raw into b, in order, up to the first
// goroutine record, the first slot not yet written (a zero Word), or the
// end of raw, and returns how many it encoded. A goroutine record stops
// it for the caller to encode with Goroutine.
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
			if w == 0 || op == RawGoroutineOp {
				return done
			}
			b.put(w>>RawOpBits, op, raw[done].Time)
			if op&3 == opEnter {
				b.enters++
			}
			done++
		}
	}
	return done
}

// encodeRun encodes the leading events of raw that are enters and exits
// of goroutine g, which is not 0, with fields below 1<<21 into buf at o,
// and returns how many it encoded, the offset after them, the last
// event's time and the number of enters. buf must have room for them all,
// and eight bytes more. A slot not yet written stops it as another
// goroutine's event does: its word, 0, is not g's.
//
// Each event is its op and its zigzag time delta, uvarints of one to three
// bytes: both are computed without a branch on their lengths and written
// with one eight-byte store.
func encodeRun(buf []byte, o int, raw []Raw, last int64, g uint64) (n, end int, t int64, enters int) {
	gw := g << RawOpBits
	exits := 0
	i := 0
	for ; i < len(raw); i++ {
		// The word less the goroutine is the op, if the event is g's;
		// otherwise it is at least 1<<RawOpBits, and stops the loop
		// with fields too long for three bytes.
		op := atomic.LoadUint64(&raw[i].Word) ^ gw
		if op >= 1<<21 || op == RawGoroutineOp {
			break // the time of a slot not yet written is not to be read
		}
		t := raw[i].Time
		d := t - last
		z := uint64(d<<1) ^ uint64(d>>63)
		if z >= 1<<21 {
			break
		}
		x, xn := enc3(op)
		y, yn := enc3(z)
		binary.LittleEndian.PutUint64(buf[o:o+8], x|y<<(8*xn))
		o += int(xn + yn)
		last = t
		exits += int(op & opExit) // an exit's op is odd, an enter's even
	}
	return i, o, last, i - exits
}

// enc3 returns v, below 1<<21, as a uvarint of one to three bytes in the
// low bytes of x, and its length, without a branch on the length: v's
// groups of seven bits are spread a byte apart (v + a + 2b), and each
// byte followed by another gets its continuation bit.
func enc3(v uint64) (x, n uint64) {
	a := v &^ (1<<7 - 1)  // the bits of the second and third bytes
	b := v &^ (1<<14 - 1) // the bits of the third byte
	var c1, c2 uint64
	if a != 0 {
		c1 = 1
	}
	if b != 0 {
		c2 = 1
	}
	return v + a + 2*b | c1<<7 | c2<<15, 1 + c1 + c2
}
