package tracefile

import (
	"math"
	"strconv"
)

// Values: with calltrail's --args, a call's arguments follow its enter,
// and its results come just before its exit (and its error), each as an
// extended op of extValue and up. The op's time delta carries the value's
// 64 bits instead of a time: the delta is taken from the time before, and
// the next event's delta from the value, so times stay exact around it.
// A string is its length, then up to MaxValueString bytes in ops of eight.
const (
	extValue = 1 << 21 // ext ops from here are values: extValue + kind<<1 + (1 for a result)
	// MaxValueString is the most bytes of a string value a trace keeps.
	MaxValueString = 32
)

// ValueKind says what a Value holds.
type ValueKind uint8

// Kinds of values. Only the kinds of Go's basic types are recorded whole;
// of the others, a length or a type.
const (
	IntValue    ValueKind = iota + 1 // Bits is an int64
	UintValue                        // Bits is a uint64
	FloatValue                       // Bits is a float64's bits
	BoolValue                        // Bits is 0 or 1
	StringValue                      // Str holds up to MaxValueString bytes of it, Bits its length
	LenValue                         // a slice, map, array or channel: Bits is its length
	TypeValue                        // an interface, a struct, a pointer...: Type is its dynamic type
	NilValue                         // a nil interface, pointer, function or map
	bytesValue                       // eight bytes of the string before
	maxValueKind
)

// A Value is an argument or result of a call, recorded with --args.
type Value struct {
	Kind   ValueKind
	Result bool   // a result, not an argument
	Bits   uint64 // see the kinds
	Str    string // of a StringValue
	Type   string // of a TypeValue: the dynamic type, "*os.File"
}

// String formats v as Go would print it, near enough: 42, "abc"…,
// len=3, *os.File, nil.
func (v Value) String() string {
	switch v.Kind {
	case IntValue:
		return strconv.FormatInt(int64(v.Bits), 10)
	case UintValue:
		return strconv.FormatUint(v.Bits, 10)
	case FloatValue:
		return strconv.FormatFloat(math.Float64frombits(v.Bits), 'g', -1, 64)
	case BoolValue:
		return strconv.FormatBool(v.Bits != 0)
	case StringValue:
		s := strconv.Quote(v.Str)
		if uint64(len(v.Str)) < v.Bits {
			s += "…"
		}
		return s
	case LenValue:
		return "len=" + strconv.FormatUint(v.Bits, 10)
	case TypeValue:
		return v.Type
	case NilValue:
		return "nil"
	}
	return "?"
}

// RawValue returns the Raw.Word of a value of goroutine g's innermost
// call, of kind k; its Raw.Time holds the value's bits. A string's bytes
// follow in RawValueBytes words, as many as StringBytes says.
func RawValue(g uint64, k ValueKind, result bool) uint64 {
	op := uint64(extValue) + uint64(k)<<1
	if result {
		op++
	}
	return g<<RawOpBits | op<<2 | opExt
}

// RawValueBytes is the Raw.Word of eight bytes of a string value, which
// its Raw.Time holds, little endian.
func RawValueBytes(g uint64) uint64 { return RawValue(g, bytesValue, false) }

// StringBytes is how many bytes of a string of length n a trace keeps.
func StringBytes(n int) int { return min(n, MaxValueString) }

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
func (b *Batch) Value(g uint64, k ValueKind, result bool, bits uint64, s string) {
	b.put(g, RawValue(g, k, result)&RawOpMask, int64(bits))
	if k == StringValue {
		for i := 0; i < StringBytes(len(s)); i += 8 {
			b.put(g, RawValueBytes(g)&RawOpMask, PackBytes(s, i))
		}
	}
}
