package records

import (
	"math"
	"strconv"
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
	StringValue                      // Str holds up to wire.MaxValueString bytes of it, Bits its length
	LenValue                         // a slice, map, array or channel: Bits is its length
	TypeValue                        // an interface, a struct, a pointer...: Type is its dynamic type
	NilValue                         // a nil interface, pointer, function or map
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
