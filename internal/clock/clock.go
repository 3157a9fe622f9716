package clock

import (
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/calltrail/calltrail/internal/gstate"
)

var (
	useCounter bool   // stamp with gstate.Ticks, not Nanotime
	name       string // "tsc", "cntvct" or "monotonic"
	tickShift  uint
	setupOnce  sync.Once
)

// Now returns the current time in trace units.
func Now() int64 {
	if useCounter {
		return gstate.Ticks() >> tickShift
	}
	return Nanotime()
}

// Units turns a cycle counter reading (from gstate.State) into trace
// units, or reads the monotonic clock where the counter is not used.
func Units(ticks int64) int64 {
	if useCounter {
		return ticks >> (tickShift & 63) // the mask spares the check for a shift past 63
	}
	return Nanotime()
}

// Counter reports whether trace units come from the cycle counter.
func Counter() bool { return useCounter }

// Shift returns how far Units shifts a counter reading right, for code
// that turns readings into units itself; ok is false where units do not
// come from the counter.
func Shift() (shift uint, ok bool) { return tickShift, useCounter }

// Name names the clock: "tsc", "cntvct" or "monotonic".
func Name() string { return name }

// Read reads the clock Now reads, raw: the cycle counter, not shifted,
// or the monotonic clock. It is what a benchmark takes as the floor of
// timing a call.
func Read() int64 {
	if useCounter {
		return gstate.Ticks()
	}
	return Nanotime()
}

// Monotonic makes the clock the monotonic one, for tests of that path,
// until the returned function restores it.
func Monotonic() (restore func()) {
	u := useCounter
	useCounter = false
	return func() { useCounter = u }
}

// counterSafe reports whether the cycle counter can be trusted as a
// clock that is the same on every core and never changes rate.
func counterSafe() (bool, string) {
	switch os.Getenv("CALLTRAIL_CLOCK") {
	case "mono", "monotonic":
		return false, "monotonic"
	}
	if !gstate.Have {
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

// Setup chooses the clock and measures the counter's rate roughly, over
// about 200µs, to choose tickShift. The exact rate comes later from the
// writer's calibration points. It runs once per process, after
// gstate.Probe; until then the clock is the monotonic one.
func Setup() {
	setupOnce.Do(setup)
}

func setup() {
	useCounter, name = counterSafe()
	tickShift = 0
	if !useCounter {
		return
	}
	t0, n0 := gstate.Ticks(), Nanotime()
	var t1, n1 int64
	for {
		t1, n1 = gstate.Ticks(), Nanotime()
		if n1-n0 >= 200_000 {
			break
		}
	}
	perNs := float64(t1-t0) / float64(n1-n0)
	if perNs < 0.01 || perNs > 100 {
		// Not a plausible counter: do not trust it.
		useCounter, name = false, "monotonic"
		return
	}
	for perNs >= 2 {
		tickShift++
		perNs /= 2
	}
}
