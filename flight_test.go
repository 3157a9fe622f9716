//go:build calltrail

package calltrail

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// flightTrace takes a snapshot (or, with d > 0, a capture of d) and reads
// it back.
func flightTrace(t *testing.T, d time.Duration) (trace, Window) {
	t.Helper()
	var buf bytes.Buffer
	var w Window
	var err error
	if d > 0 {
		w, err = Capture(&buf, d)
	} else {
		w, err = Snapshot(&buf)
	}
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "snapshot.out")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return readTrace(t, path), w
}

// TestFlightKeepsLastCalls runs a goroutine inside one long call while it
// makes many more calls than the flight recorder holds: the snapshot has
// the last calls, not the first, and starts with the long call, still
// open, so that no exit lacks its enter.
func TestFlightKeepsLastCalls(t *testing.T) {
	// Rings of 128 KiB, the window's budget the other 128 KiB.
	defer useFlight(t, options{buffer: 256 << 10, every: 2 * time.Millisecond})()
	f := tr.w.flight
	call(&funcs[0], func() { // test.outer, open throughout
		call(&funcs[5], func() {}) // test.recovers: first, to be dropped
		deadline := time.Now().Add(5 * time.Second)
		for f.droppedSegments() < 3 && time.Now().Before(deadline) {
			for range 1000 {
				call(&funcs[3], func() { call(&funcs[2], func() {}) }) // test.rec, test.leaf
			}
		}
		call(&funcs[8], func() {}) // test.root: last, to be kept
		got, w := flightTrace(t, 0)
		if len(got.calls) != 1 {
			t.Fatalf("calls of %d goroutines, want one: %v", len(got.calls), got.calls)
		}
		var calls []string
		for _, c := range got.calls {
			calls = c
		}
		s := strings.Join(calls, " ")
		switch {
		case w.Dropped < 3:
			t.Fatalf("no segment dropped: %+v", w)
		case len(calls) == 0 || calls[0] != "->test.outer":
			t.Errorf("the snapshot does not start with the open call: %.200s", s)
		case strings.Contains(s, "test.recovers"):
			t.Errorf("the first calls are still in the window")
		case !strings.Contains(s, "->test.root <-test.root"):
			t.Errorf("the last call is not in the window: ...%s", s[max(0, len(s)-200):])
		case w.Open < 1 || w.Open > 3 || w.Bytes > 256<<10 || w.Start <= 0 || w.End <= w.Start:
			// test.outer is open at the window's start, and test.rec
			// and test.leaf may be too.
			t.Errorf("window %+v: want one to three open calls, within the budget", w)
		}
	})
}

// useFlight is useTracerOn for a flight recorder, with the test
// functions' ids forgotten: they belong to the tracer that gave them.
func useFlight(t *testing.T, o options) (stop func()) {
	o.flight = true
	stop = useTracerOn(t, discard{}, o)
	for i := range funcs {
		funcs[i].id.Store(0)
	}
	return stop
}

// droppedSegments reports how many segments f dropped.
func (f *flight) droppedSegments() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dropped
}

// TestCapturePaused checks that a paused program records nothing until a
// capture, that the capture holds the calls made while it ran, and that
// recording is off again after it.
func TestCapturePaused(t *testing.T) {
	defer useFlight(t, options{paused: true, every: 5 * time.Millisecond})()
	recording.Store(false)     // as start does for CALLTRAIL=paused
	call(&funcs[5], func() {}) // before: not recorded
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			call(&funcs[1], func() {})
			time.Sleep(100 * time.Microsecond)
		}
	}()
	got, w := flightTrace(t, 50*time.Millisecond)
	stop.Store(true)
	wg.Wait()
	if recording.Load() {
		t.Error("recording still on after the capture")
	}
	all := ""
	for _, c := range got.calls {
		all += strings.Join(c, " ") + " "
	}
	if !strings.Contains(all, "->test.inner <-test.inner") || strings.Contains(all, "test.recovers") || w.Calls == 0 {
		t.Errorf("capture %+v holds %.300s", w, all)
	}
}

// TestSnapshotWithoutFlight checks that Snapshot says why it cannot.
func TestSnapshotWithoutFlight(t *testing.T) {
	defer useTracer(t, filepath.Join(t.TempDir(), "t.out"), options{})()
	if _, err := Snapshot(&bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "CALLTRAIL_MODE=flight") {
		t.Errorf("Snapshot without a flight recorder: %v", err)
	}
}
