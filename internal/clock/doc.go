// Package clock is the time source of calltrail's runtime. Events are
// stamped with the CPU's cycle counter when it is safe to (TSC on amd64
// when it is invariant and the kernel trusts it, CNTVCT_EL0 on arm64), and
// with the runtime's monotonic clock otherwise. Counter values are shifted
// right so that one unit is about a nanosecond, which keeps time deltas in
// the trace small; the writer records (units, nanoseconds) pairs so that
// readers convert exactly.
package clock
