//go:build amd64 || arm64

package calltrail

// haveG reports whether this architecture has the assembly that reads the
// current goroutine's g and the cycle counter.
const haveG = true

func gstate(goidOff uintptr) (goid uint64, panicking uintptr, ticks int64)
func ticks() int64
func gword(off uintptr) uint64
func fpcaller(hops uintptr) uintptr
