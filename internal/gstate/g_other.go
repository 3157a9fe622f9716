//go:build !amd64 && !arm64

package gstate

// Have is false: on this architecture the goroutine id comes from
// runtime.Stack and time from the monotonic clock.
const Have = false

func readP() (uint64, uintptr, int64, int64) { return 0, 0, 0, -1 }
func at(uintptr) uint64                      { return 0 }
func gptr() uintptr                          { return 0 }

// Ticks is not used on this architecture.
func Ticks() int64 { return 0 }

// Caller is not used on this architecture: Hops is -1.
func Caller(uintptr) uintptr { return 0 }
