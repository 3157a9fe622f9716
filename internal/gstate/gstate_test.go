package gstate

import (
	"runtime"
	"testing"
)

func TestProbe(t *testing.T) {
	Probe(true)
	switch runtime.GOARCH {
	case "amd64", "arm64":
		if !Fast() {
			t.Fatalf("%s/%s: the offsets of g.goid and g._panic were not verified", runtime.Version(), runtime.GOARCH)
		}
		if !HasParents() {
			t.Errorf("%s: parent goroutine offset not found", runtime.Version())
		}
		if Hops() < 0 {
			t.Errorf("frame pointer walk not calibrated")
		}
	default:
		if Fast() {
			t.Fatalf("fast goroutine ids on %s, which has no assembly", runtime.GOARCH)
		}
	}
	done := make(chan [2]uint64)
	go func() { done <- [2]uint64{Goid(), StackGoid()} }()
	if ids := <-done; ids[0] != ids[1] {
		t.Errorf("goroutine id %d, runtime.Stack says %d", ids[0], ids[1])
	}
}

// TestState checks what State says of a goroutine: its id, and whether a
// panic or Goexit unwinds it, as the hot path's exits ask.
func TestState(t *testing.T) {
	Probe(true)
	if !Fast() {
		t.Skipf("no fast path on %s/%s", runtime.Version(), runtime.GOARCH)
	}
	type seen struct {
		goid      uint64
		panicking uintptr
	}
	look := func() seen {
		g, p, _ := State()
		return seen{g, p}
	}
	done := make(chan [3]seen)
	go func() {
		var s [3]seen
		defer func() { done <- s }()
		s[0] = look()
		func() {
			defer func() {
				s[1] = look()
				recover()
			}()
			panic("test")
		}()
		s[2] = look() // recovered: no panic in progress
	}()
	s := <-done
	want := s[0].goid
	for i, x := range s {
		if x.goid != want {
			t.Errorf("look %d: goroutine %d, want %d", i, x.goid, want)
		}
	}
	if s[0].panicking != 0 || s[1].panicking == 0 || s[2].panicking != 0 {
		t.Errorf("panicking before, during and after a recovered panic: %x %x %x, want 0, non-zero, 0", s[0].panicking, s[1].panicking, s[2].panicking)
	}
}

func TestFallback(t *testing.T) {
	Probe(true)
	restore := Fallback()
	if Fast() || HasParents() || Hops() != -1 {
		t.Errorf("Fallback leaves Fast %v, HasParents %v, Hops %d", Fast(), HasParents(), Hops())
	}
	done := make(chan [2]uint64)
	go func() { done <- [2]uint64{Goid(), StackGoid()} }()
	if ids := <-done; ids[0] != ids[1] || ids[0] == 0 {
		t.Errorf("goroutine id %d, runtime.Stack says %d", ids[0], ids[1])
	}
	restore()
	if Have && !Fast() {
		t.Error("restore did not restore")
	}
}

func TestGoMinor(t *testing.T) {
	for v, want := range map[string]int{"go1.22.3": 22, "go1.26rc1": 26, "go1.9": 9, "devel go1.27-abc": 0, "": 0} {
		if got := goMinor(v); got != want {
			t.Errorf("goMinor(%q) = %d, want %d", v, got, want)
		}
	}
}

// TestStateP checks that StateP gives the P runtime.procPin says, on
// this Go release and architecture, and that the probe that finds m.p
// survives a candidate that is no pointer.
func TestStateP(t *testing.T) {
	Probe(true)
	if !Fast() {
		t.Skip("no offsets in g on this platform")
	}
	if raceEnabled {
		if pOff != 0 {
			t.Fatal("m.p used under the race detector, whose atomics are preemptible calls")
		}
		if _, _, _, p := StateP(); p != -1 {
			t.Fatalf("StateP says P %d under the race detector", p)
		}
		return
	}
	if pOff == 0 {
		t.Fatalf("m.p not found on %s", runtime.Version())
	}
	for range 1000 {
		pid := procPin()
		_, _, _, p := StateP()
		procUnpin()
		if p != pid {
			t.Fatalf("StateP says P %d, runtime.procPin %d", p, pid)
		}
		runtime.Gosched()
	}
	if isP(^uintptr(0)&^7, 8, -1) {
		t.Error("an address that faults is a P")
	}
}

// BenchmarkTicksShadow tells whether this host runs other work in the
// shadow of the cycle counter's reads, as the hot path's enter and exit
// need it to: two reads alone (the floor), a little work alone, and the
// two interleaved. Where "both" costs the floor, the work is hidden; where
// it costs their sum, everything the hot path does beside the reads adds
// to the floor. Only where the counter is read (amd64, arm64).
func BenchmarkTicksShadow(b *testing.B) {
	if !Have {
		b.Skip("no cycle counter read on this architecture")
	}
	b.Run("floor", func(b *testing.B) {
		var s int64
		for range b.N {
			s += Ticks()
			s ^= Ticks()
		}
		shadowSink = s
	})
	b.Run("work", func(b *testing.B) {
		var s int64
		for i := range b.N {
			s += shadowWork(i)
			s += shadowWork(i + 1)
		}
		shadowSink = s
	})
	b.Run("both", func(b *testing.B) {
		var s int64
		for i := range b.N {
			s += Ticks()
			s += shadowWork(i)
			s ^= Ticks()
			s += shadowWork(i + 1)
		}
		shadowSink = s
	})
}

var (
	shadowSink int64
	shadowMem  [64]int64
)

// shadowWork is loads, stores and arithmetic that do not depend on the
// counter, about what an enter or an exit does beside reading it.
//
//go:noinline
func shadowWork(i int) int64 {
	x := int64(i)
	for j := range 8 {
		x += shadowMem[(i+j)&63] * 3
		shadowMem[(i+j*7)&63] = x
	}
	return x
}
