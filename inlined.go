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
	f := runtime.FuncForPC(pcOf())
	return f != nil && f.Entry() == reflect.ValueOf(hotPathInlined).Pointer()
}

// pcOf returns a pc of its own code, which is its caller's once inlined.
func pcOf() uintptr {
	var pc [1]uintptr
	runtime.Callers(1, pc[:])
	return pc[0]
}
