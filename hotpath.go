package calltrail

import (
	"sync/atomic"

	"github.com/calltrail/calltrail/internal/clock"
	"github.com/calltrail/calltrail/internal/gstate"
	"github.com/calltrail/calltrail/internal/ring"
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

// ownedTable is the tracer's owned table, where the assembly reads its
// address in one load beside the g's; through tr it would be two loads
// after each other. use keeps it with tr.
//
//lint:ignore U1000 the assembly reads it
var ownedTable *atomic.Pointer[ring.Ring]

// use makes t the tracer. Nothing else sets tr, so that ownedTable is
// always its table.
func use(t *tracer) {
	if t != nil {
		ownedTable = &t.owned[0]
	} else {
		ownedTable = nil
	}
	tr = t
}

// setHot sets hot from what gstate and clock found: by setup, and by
// tests that change them. The assembly also needs the g in R14 (see
// hotpath_amd64.s), as Go has kept it since its register ABI.
func setHot() {
	h := hotState{}
	goid, p := gstate.Offsets()
	shift, counter := clock.Shift()
	if p != 0 && counter && asmHotPath && gInR14() == gstate.G() {
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
