//go:build !amd64 && !arm64

package calltrail

// haveG is false: on this architecture the goroutine id comes from
// runtime.Stack and time from the monotonic clock.
const haveG = false

func gstate(uintptr) (uint64, uintptr, int64) { return 0, 0, 0 }
func ticks() int64                            { return 0 }
func gword(uintptr) uint64                    { return 0 }
func fpcaller(uintptr) uintptr                { return 0 }
