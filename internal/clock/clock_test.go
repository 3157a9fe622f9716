package clock

import (
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/gstate"
)

// TestNow checks that trace units advance with the monotonic clock: at
// most two a nanosecond, as the shift makes them, and at least one in 100
// ns, below which Setup does not trust a counter. Counters slower than a
// gigahertz (many arm64 timers run at 24 to 100 MHz) give units longer
// than a nanosecond.
func TestNow(t *testing.T) {
	gstate.Probe(true)
	Setup()
	t.Logf("clock %s, counter %v, shift %d", Name(), Counter(), tickShift)
	if !Counter() && Now() == 0 {
		t.Fatal("the monotonic clock reads 0")
	}
	u0, n0 := Now(), Nanotime()
	time.Sleep(20 * time.Millisecond)
	u1, n1 := Now(), Nanotime()
	ratio := float64(u1-u0) / float64(n1-n0)
	// Counters run from tens of megahertz (qemu's arm64) to a few
	// gigahertz (a TSC).
	if ratio < 0.01 || ratio > 8 {
		t.Errorf("%d units in %d ns: %.2f a nanosecond", u1-u0, n1-n0, ratio)
	}
	if Counter() && Units(Read()) < u1 {
		t.Errorf("Units(Read()) is behind Now")
	}
	restore := Monotonic()
	if Counter() || Now() < n1 {
		t.Errorf("Monotonic: counter %v, Now %d before the monotonic clock's %d", Counter(), Now(), n1)
	}
	restore()
}
