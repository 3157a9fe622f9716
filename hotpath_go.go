//go:build !amd64 || race

package calltrail

import "github.com/calltrail/calltrail/internal/gstate"

// asmHotPath says whether enterFast and exitFast are in assembly. Race
// builds use Go, whose memory accesses the race detector sees.
const asmHotPath = false

// gInR14 is the g, for setHot: there is no assembly to find it in R14.
func gInR14() uintptr { return gstate.G() }

// enterFast records the calling goroutine's entry into f: tracer.enter, where
// there is no assembly for its common case.
func enterFast(f *Func) Call { return tr.enter(f) }

// exitFast records the end of call c, which returned no error.
func exitFast(c Call) { tr.exitErr(c, 0) }
