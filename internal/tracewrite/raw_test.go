package tracewrite

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"testing"

	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/wire"
	"github.com/calltrail/calltrail/tracefile"
)

// randomRaw makes n raw events of a few goroutines with function ids and
// time deltas of every varint length AppendRaw distinguishes, and a
// goroutine record now and then.
func randomRaw(rng *rand.Rand, n int) []Raw {
	var raw []Raw
	t := int64(rng.Intn(1 << 30))
	g := uint64(1)
	for len(raw) < n {
		if rng.Intn(20) == 0 {
			g = uint64(1 + rng.Intn(5))
			if rng.Intn(3) == 0 {
				g = uint64(rng.Int63n(1 << 38))
			}
		}
		// Deltas: mostly small, some of two and three bytes, some huge,
		// some negative (another goroutine's clock reading was earlier).
		switch rng.Intn(12) {
		case 0:
			t += rng.Int63n(1 << 40)
		case 10:
			t += 1<<13 - 2 + rng.Int63n(4) // about the two-byte limit
		case 11:
			t -= 1<<13 - 2 + rng.Int63n(4)
		case 1:
			t -= rng.Int63n(1 << 12)
		case 2:
			t += rng.Int63n(1 << 20)
		default:
			t += rng.Int63n(100)
		}
		var fn uint32
		switch rng.Intn(5) {
		case 0:
			fn = uint32(rng.Intn(1 << (RawOpBits - 2)))
		case 1:
			fn = uint32(1<<12 - 2 + rng.Intn(4)) // an op about the two-byte limit
		default:
			fn = uint32(1 + rng.Intn(40))
		}
		switch rng.Intn(20) {
		case 0:
			raw = append(raw, Raw{Word: g<<RawOpBits | RawGoroutineOp, Time: t})
		case 9:
			// An error, before its call's exit: ids of every length.
			id := uint32(1 + rng.Intn(1<<uint(1+rng.Intn(20))))
			raw = append(raw, Raw{Word: RawError(g, min(id, tracefile.MaxErrorID)), Time: t}, Raw{Word: RawExit(g, tracefile.Return), Time: t})
		case 1, 2, 3, 4, 5, 6, 7, 8:
			raw = append(raw, Raw{Word: RawExit(g, tracefile.ExitKind(rng.Intn(3))), Time: t})
		default:
			raw = append(raw, Raw{Word: RawEnter(g, fn), Time: t})
		}
	}
	return raw
}

// TestAppendRaw checks that AppendRaw writes exactly what Enter and Exit
// write for the same events, and stops at goroutine records.
func TestAppendRaw(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 200; trial++ {
		raw := randomRaw(rng, 1+rng.Intn(3*rawBlock))
		var fast, slow Batch
		for i := 0; i < len(raw); {
			n := fast.AppendRaw(raw[i:])
			for _, r := range raw[i : i+n] {
				g, op := r.Word>>RawOpBits, r.Word&RawOpMask
				switch op & 3 {
				case wire.OpEnter:
					slow.Enter(g, uint32(op>>2), r.Time)
				case wire.OpExit:
					slow.Exit(g, tracefile.ExitKind(op>>2), r.Time)
				default:
					slow.Error(g, uint32(op>>2), r.Time)
				}
			}
			i += n
			if i < len(raw) {
				if op := raw[i].Word & RawOpMask; op != RawGoroutineOp {
					t.Fatalf("AppendRaw stopped at an event with op %d", op)
				}
				gr := tracefile.Goroutine{ID: raw[i].Word >> RawOpBits, Parent: 7}
				fast.Goroutine(gr, raw[i].Time)
				slow.Goroutine(gr, raw[i].Time)
				i++
			}
		}
		if !bytes.Equal(fast.buf, slow.buf) || fast.n != slow.n || fast.enters != slow.enters || fast.base != slow.base {
			t.Fatalf("trial %d: AppendRaw wrote %d events (%d enters, base %d) in %x,\nEnter/Exit %d (%d, base %d) in %x",
				trial, fast.n, fast.enters, fast.base, fast.buf, slow.n, slow.enters, slow.base, slow.buf)
		}
	}
}

// TestEncodeRunGeneric checks that encodeRun, which may be assembly,
// and encodeRunGeneric, in Go, encode the same runs alike.
func TestEncodeRunGeneric(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for trial := 0; trial < 500; trial++ {
		raw := randomRaw(rng, 1+rng.Intn(rawBlock))
		g := raw[0].Word >> RawOpBits
		last := raw[0].Time - int64(rng.Intn(1<<15))
		a := make([]byte, len(raw)*maxRawEvent+8)
		b := make([]byte, len(raw)*maxRawEvent+8)
		n, end, at, enters := encodeRun(a, 3, raw, last, g)
		gn, gend, gt, genters := encodeRunGeneric(b, 3, raw, last, g)
		if n != gn || end != gend || at != gt || enters != genters || !bytes.Equal(a[:end], b[:gend]) {
			t.Fatalf("trial %d: encodeRun: %d events, %d enters, to %d, last %d: %x\nencodeRunGeneric: %d, %d, to %d, last %d: %x",
				trial, n, enters, end, at, a[:end], gn, genters, gend, gt, b[:gend])
		}
	}
}

func TestPair(t *testing.T) {
	vs := []uint64{0, 1, 127, 128, 255, 1<<14 - 1, 1 << 14, 1<<21 - 1}
	for _, a := range vs {
		for _, b := range vs {
			x, n := pair(a | b<<24)
			got := binary.LittleEndian.AppendUint64(nil, x)
			want := appendUvarint(appendUvarint(nil, a), b)
			if !bytes.Equal(got[:n], want) || x>>(8*n) != 0 {
				t.Errorf("pair(%d, %d) = %x (%d bytes), want %x", a, b, got, n, want)
			}
		}
	}
}

func TestQuad(t *testing.T) {
	vs := []uint64{0, 1, 127, 128, 1<<14 - 1}
	for _, a := range vs {
		for _, b := range vs {
			for _, c := range vs {
				for _, d := range vs {
					s, cont := quad(a | b<<16 | c<<32 | d<<48)
					for i, v := range []uint64{a, b, c, d} {
						lane := s >> (16 * i) & 0xffff
						n := 1 + cont>>(16*i+14)&1
						got := binary.LittleEndian.AppendUint16(nil, uint16(lane))
						if want := appendUvarint(nil, v); !bytes.Equal(got[:n], want) || lane>>(8*n) != 0 {
							t.Fatalf("quad lane %d of %d: %x (%d bytes), want %x", i, v, got, n, want)
						}
					}
				}
			}
		}
	}
}

func appendUvarint(p []byte, v uint64) []byte {
	for v >= 0x80 {
		p = append(p, byte(v)|0x80)
		v >>= 7
	}
	return append(p, byte(v))
}

func TestEarliestRaw(t *testing.T) {
	for _, c := range []struct {
		name string
		raw  []Raw
		want int64
		ok   bool
	}{
		{"none", nil, 0, false},
		{"values only", []Raw{{RawValue(1, records.IntValue, false), -5}, {RawSpanID(1), -7}}, 0, false},
		{"enter and exit", []Raw{{RawEnter(1, 2), 30}, {RawExit(2, records.Return), 20}}, 20, true},
		{"error and span", []Raw{{RawEnter(1, 2), 30}, {RawError(1, 4), 10}, {RawSpan(3, false), 15}}, 10, true},
		{"a value before", []Raw{{RawValue(1, records.IntValue, true), 1}, {RawExit(1, records.Return), 40}}, 40, true},
		{"held", []Raw{{RawExit(1, records.Return), 40}, {RawHeld(1, false), 35}, {RawHeld(1, true), 38}}, 35, true},
	} {
		got, ok := EarliestRaw(c.raw)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%s: EarliestRaw = %d, %v; want %d, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
