//go:build amd64 || arm64

package gstate

// Have reports whether this architecture has the assembly that reads the
// current goroutine's g and the cycle counter.
const Have = true

// Ticks reads the cycle counter: TSC on amd64, CNTVCT_EL0 on arm64.
func Ticks() int64

// Caller follows hops saved frame pointers up from its caller's frame and
// returns the return address stored beside the last one: for a function
// shaped like Trace, Hops() of them give its caller's return address.
func Caller(hops uintptr) uintptr

func readP() (goid uint64, panicking uintptr, ticks int64, p int64)
func at(addr uintptr) uint64 // the word at addr
func gptr() uintptr          // the current goroutine's g
