// Package gstate reads what calltrail's hot path needs of the calling
// goroutine straight from the Go runtime's g: its id, whether a panic is
// unwinding it, and who created it; and the cycle counter, in the same
// call. The offsets in g change between Go releases: Probe finds them at
// start-up and checks them against what the runtime says by other means,
// and where it cannot, Fast is false and callers use the slow, always
// right, fallbacks (StackGoid, the monotonic clock, runtime.Callers).
package gstate
