package calltrail

import (
	"math"
	"reflect"
	"unsafe"

	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/ring"
	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/internal/wire"
)

// Arg records an argument of call c, after Enter, for a function traced
// with --args; Result records a result, before Exit. Values of Go's basic
// kinds are recorded whole (a string's first 32 bytes), of slices, maps,
// arrays and channels the length, of interfaces the dynamic type, of
// anything else the type. Neither calls the program's code (no String
// method) nor allocates: the value goes into the ring, like the call.
//
//	func D(name string, n int) (__ctr0 int, __ctErr error) {
//		if calltrail.Enabled { if c := calltrail.Enter(&_ctf[0]); c != 0 { calltrail.Arg(c, name); calltrail.Arg(c, n); defer func() { calltrail.Result(c, __ctr0); calltrail.ExitErr(c, &__ctErr) }() } }
//		...
//	}
//
// For generated code: programs need not call it (see the package
// documentation).
func Arg[T any](c Call, v T) {
	if Enabled && c != 0 {
		k, bits, s := valueOf(&v)
		tr.value(c, k, false, bits, s)
	}
}

// Result records a result of call c: see Arg.
//
// For generated code: programs need not call it (see the package
// documentation).
func Result[T any](c Call, v T) {
	if Enabled && c != 0 {
		k, bits, s := valueOf(&v)
		tr.value(c, k, true, bits, s)
	}
}

// valueOf returns what the trace keeps of *p: its kind, its bits, and
// for a string the string. It reads the value by its static type's kind,
// through unsafe for named types (a time.Duration is an int64), so that
// nothing is converted to an interface that could escape.
func valueOf[T any](p *T) (records.ValueKind, uint64, string) {
	switch x := any(*p).(type) { // the common types, without reflect
	case int:
		return records.IntValue, uint64(x), ""
	case string:
		return records.StringValue, uint64(len(x)), x
	case bool:
		return records.BoolValue, b2u(x), ""
	case int64:
		return records.IntValue, uint64(x), ""
	case float64:
		return records.FloatValue, math.Float64bits(x), ""
	}
	t := reflect.TypeOf((*T)(nil)).Elem()
	u := unsafe.Pointer(p)
	switch t.Kind() {
	case reflect.Int: // four bytes on 32-bit platforms
		return records.IntValue, uint64(*(*int)(u)), ""
	case reflect.Int64:
		return records.IntValue, uint64(*(*int64)(u)), ""
	case reflect.Int8:
		return records.IntValue, uint64(*(*int8)(u)), ""
	case reflect.Int16:
		return records.IntValue, uint64(*(*int16)(u)), ""
	case reflect.Int32:
		return records.IntValue, uint64(*(*int32)(u)), ""
	case reflect.Uint:
		return records.UintValue, uint64(*(*uint)(u)), ""
	case reflect.Uintptr:
		return records.UintValue, uint64(*(*uintptr)(u)), ""
	case reflect.Uint64:
		return records.UintValue, *(*uint64)(u), ""
	case reflect.Uint8:
		return records.UintValue, uint64(*(*uint8)(u)), ""
	case reflect.Uint16:
		return records.UintValue, uint64(*(*uint16)(u)), ""
	case reflect.Uint32:
		return records.UintValue, uint64(*(*uint32)(u)), ""
	case reflect.Float32:
		return records.FloatValue, math.Float64bits(float64(*(*float32)(u))), ""
	case reflect.Float64:
		return records.FloatValue, math.Float64bits(*(*float64)(u)), ""
	case reflect.Bool:
		return records.BoolValue, b2u(*(*bool)(u)), ""
	case reflect.String:
		s := *(*string)(u)
		return records.StringValue, uint64(len(s)), s
	case reflect.Slice:
		return records.LenValue, uint64((*[3]int)(u)[1]), ""
	case reflect.Array:
		return records.LenValue, uint64(t.Len()), ""
	case reflect.Map, reflect.Chan:
		// Pointer-shaped: in an interface without a copy.
		v := reflect.ValueOf(any(*p))
		if v.IsNil() {
			return records.NilValue, 0, ""
		}
		return records.LenValue, uint64(v.Len()), ""
	case reflect.Interface:
		e := (*[2]unsafe.Pointer)(u) // itab or type, then data
		if e[0] == nil {
			return records.NilValue, 0, ""
		}
		var x any
		if t.NumMethod() == 0 {
			x = *(*any)(u)
		} else {
			x = *(*interface{ M() })(u) // the same layout, whatever the methods
		}
		return records.TypeValue, uint64(tr.typeID(x)), ""
	case reflect.Pointer, reflect.Func, reflect.UnsafePointer:
		if *(*unsafe.Pointer)(u) == nil {
			return records.NilValue, 0, ""
		}
	}
	return records.TypeValue, uint64(tr.staticTypeID(t)), ""
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// typeID returns the id of x's dynamic type's name.
func (t *tracer) typeID(x any) uint32 { return t.staticTypeID(reflect.TypeOf(x)) }

func (t *tracer) staticTypeID(typ reflect.Type) uint32 {
	if id, ok := t.errs.types.Load(typ); ok {
		return id.(uint32)
	}
	t.errs.mu.Lock()
	id := t.errs.intern(errorKey{typ.String(), ""})
	t.errs.mu.Unlock()
	t.errs.types.Store(typ, id)
	return id
}

// value records a value of call c: its slot, and a string's bytes after.
func (t *tracer) value(c Call, k records.ValueKind, result bool, bits uint64, s string) {
	g := c.goroutine()
	n := uint64(1)
	if k == records.StringValue {
		n += uint64(wire.StringBytes(len(s))+7) / 8
	}
	if t.perP != 0 {
		i, pos, from, to, ok := t.claimWait(g, n, upto{})
		if !ok {
			return
		}
		putValue(&t.rings[i], pos, g, k, result, bits, s, n)
		procUnpin()
		if from != 0 {
			// The value is the call's; so is the wait for it.
			t.noteHeld(g, from, to)
		}
		return
	}
	r := &t.rings[g&t.ringMask]
	pos, ok := r.Reserve(n, 0)
	if !ok {
		r.LostErrors.Add(1) // counted with the errors lost
		return
	}
	putValue(r, pos, g, k, result, bits, s, n)
}

// putValue writes, in the n slots of r at pos, a value of goroutine g's
// innermost call: its slot, and a string's bytes after.
func putValue(r *ring.Ring, pos, g uint64, k records.ValueKind, result bool, bits uint64, s string, n uint64) {
	ring.Put(r.At(pos), tracewrite.RawValue(g, k, result), int64(bits))
	for j := uint64(1); j < n; j++ {
		ring.Put(r.At(pos+j), tracewrite.RawValueBytes(g), tracewrite.PackBytes(s, int(j-1)*8))
	}
}
