package tracewrite

import (
	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/wire"
)

// RawValue returns the Raw.Word of a value of goroutine g's innermost
// call, of kind k; its Raw.Time holds the value's bits. A string's bytes
// follow in RawValueBytes words, as many as StringBytes says.
func RawValue(g uint64, k records.ValueKind, result bool) uint64 {
	op := uint64(wire.ExtValue) + uint64(k)<<1
	if result {
		op++
	}
	return g<<RawOpBits | op<<2 | wire.OpExt
}

// RawValueBytes is the Raw.Word of eight bytes of a string value, which
// its Raw.Time holds, little endian.
func RawValueBytes(g uint64) uint64 { return RawValue(g, wire.ValueBytes, false) }

// PackBytes returns up to eight bytes of s from i, little endian, for a
// RawValueBytes word's time.
func PackBytes(s string, i int) int64 {
	var x uint64
	for j := 0; j < 8 && i+j < len(s); j++ {
		x |= uint64(s[i+j]) << (8 * j)
	}
	return int64(x)
}

// Value adds a value of goroutine g's innermost call, as the runtime
// records it: kind k with bits, and for a string its bytes.
func (b *Batch) Value(g uint64, k records.ValueKind, result bool, bits uint64, s string) {
	b.put(g, RawValue(g, k, result)&RawOpMask, int64(bits))
	if k == records.StringValue {
		for i := 0; i < wire.StringBytes(len(s)); i += 8 {
			b.put(g, RawValueBytes(g)&RawOpMask, PackBytes(s, i))
		}
	}
}
