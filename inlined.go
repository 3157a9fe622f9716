package calltrail

import (
	"reflect"
	"runtime"
)

// hotPathInlined reports whether the compiler inlined calls into this
// package, as the hot path needs to write to its P's ring: enter and
// exitErr call nothing at which their goroutine could be preempted, and
// so move to another P, only because ring.Take, ring.Put, the atomics and
// the rest are inlined into them (TestHotPathCalls). Built with -l, as
// debuggers have programs built (-gcflags=all=-N -l), they are calls, and
// the hot path takes its pinned path instead.
//
//go:noinline
func hotPathInlined() bool {
	return callerEntry() == reflect.ValueOf(hotPathInlined).Pointer()
}

// callerEntry returns the entry of the function its code is in: its own,
// or its caller's once inlined, as a function this small is.
func callerEntry() uintptr { return entryOfCaller() }

// entryOfCaller returns the entry of the function whose code called it.
//
//go:noinline
func entryOfCaller() uintptr {
	var pc [1]uintptr
	if runtime.Callers(2, pc[:]) == 0 { // 0 is Callers, 1 entryOfCaller
		return 0
	}
	return runtime.FuncForPC(pc[0] - 1).Entry()
}
