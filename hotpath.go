package calltrail

import (
	"github.com/calltrail/calltrail/internal/clock"
	"github.com/calltrail/calltrail/internal/gstate"
)

// hotState is what the assembly hot path (hotpath_amd64.s) reads besides
// the tracer: where the goroutine id and the P are, and how to turn a
// counter reading into trace units. pOff 0 sends every call to the Go
// hot path: where the offsets are unknown, the clock is not the counter,
// or no assembly is built (see hotpath_go.go).
type hotState struct {
	goidOff uintptr
	pOff    uintptr
	shift   uintptr
}

//lint:ignore U1000 the assembly reads it
var hot hotState

// setHot sets hot from what gstate and clock found: by setup, and by
// tests that change them.
func setHot() {
	h := hotState{}
	goid, p := gstate.Offsets()
	shift, counter := clock.Shift()
	if p != 0 && counter && asmHotPath {
		h = hotState{goidOff: goid, pOff: p, shift: uintptr(shift)}
	}
	hot = h
}

// enterSlow and exitSlow are where the assembly hot path hands a call it
// does not finish: every case but the common one.
//
//lint:ignore U1000 the assembly jumps to it
func enterSlow(f *Func) Call {
	if slowHook != nil {
		slowHook()
	}
	return tr.enter(f)
}

//lint:ignore U1000 the assembly jumps to it
func exitSlow(c Call) {
	if slowHook != nil {
		slowHook()
	}
	tr.exitErr(c, 0)
}

// slowHook, set by tests, is called each time the assembly hot path
// hands a call to Go.
//
//lint:ignore U1000 used where there is assembly
var slowHook func()
