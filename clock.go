package calltrail

import (
	"os"
	"runtime"
	"strings"
)

// The clock. Events are stamped with the CPU's cycle counter when it is
// safe to (TSC on amd64 when it is invariant and the kernel trusts it,
// CNTVCT_EL0 on arm64), and with the runtime's monotonic clock otherwise.
// Counter values are shifted right by tickShift so that one unit is about
// a nanosecond, which keeps time deltas in the trace small. The writer
// records (units, nanoseconds) pairs so that readers convert exactly.
var (
	useCounter bool   // stamp with ticks(), not nanotime()
	clockName  string // "tsc", "cntvct" or "monotonic"
	tickShift  uint
)

// now returns the current time in trace units.
func now() int64 {
	if useCounter {
		return ticks() >> tickShift
	}
	return nanotime()
}

// counterSafe reports whether the cycle counter can be trusted as a
// clock that is the same on every core and never changes rate.
func counterSafe() (bool, string) {
	switch os.Getenv("CALLTRAIL_CLOCK") {
	case "mono", "monotonic":
		return false, "monotonic"
	}
	if !haveG {
		return false, "monotonic"
	}
	if runtime.GOARCH == "arm64" {
		return true, "cntvct" // architecturally synchronised across cores
	}
	if runtime.GOOS == "linux" {
		// The kernel demotes the TSC from clocksource when it finds it
		// unsynchronised or unstable: follow its judgement.
		b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
		if err != nil || strings.TrimSpace(string(b)) != "tsc" {
			return false, "monotonic"
		}
		return true, "tsc"
	}
	if os.Getenv("CALLTRAIL_CLOCK") == "tsc" {
		return true, "tsc"
	}
	return false, "monotonic"
}

// setupClock chooses the clock and measures the counter's rate roughly,
// over about 200µs, to choose tickShift. The exact rate comes later from
// the writer's calibration points.
func setupClock() {
	useCounter, clockName = counterSafe()
	tickShift = 0
	if !useCounter {
		return
	}
	t0, n0 := ticks(), nanotime()
	var t1, n1 int64
	for {
		t1, n1 = ticks(), nanotime()
		if n1-n0 >= 200_000 {
			break
		}
	}
	perNs := float64(t1-t0) / float64(n1-n0)
	if perNs < 0.01 || perNs > 100 {
		// Not a plausible counter: do not trust it.
		useCounter, clockName = false, "monotonic"
		return
	}
	for perNs >= 2 {
		tickShift++
		perNs /= 2
	}
}
