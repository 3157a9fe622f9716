package calltrail

import (
	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/tracewrite"
)

// A Call names one recorded call from Enter to Exit. Its low bits are the
// word of the call's enter event (see tracewrite.Raw): the goroutine from
// bit opBits up, the function id shifted left by two below. Its top two
// bits are flags. The zero Call means the call is not recorded (tracing
// off, or the call dropped), and its Exit does nothing.
//
// For generated code: programs need not use it (see the package
// documentation).
type Call uint64

const (
	opBits  = tracewrite.RawOpBits
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
	return Call(tracewrite.RawEnter(g, id&fidMask)) | Call(id&idMain)<<(62-idMainBit)
}

// word returns the event word of the call's enter.
func (c Call) word() uint64 { return uint64(c &^ (callRoot | callMain)) }

// exitWord returns the event word of the call's exit of the given kind.
func (c Call) exitWord(k records.ExitKind) uint64 {
	return tracewrite.RawExit(c.goroutine(), k)
}

// goroutine returns the goroutine that made the call.
func (c Call) goroutine() uint64 { return uint64(c&callG) >> opBits }
