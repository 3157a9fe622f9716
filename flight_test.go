//go:build calltrail

package calltrail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/internal/clock"
	"github.com/calltrail/calltrail/internal/gstate"
	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/ring"
	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
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

// waitFor bounds the tests' waits for what must come: segments dropped
// as calls fill the window, a trigger's file. They end when it comes, at
// once here; under qemu on a busy host 5 s made 14,003 calls, too few.
const waitFor = 90 * time.Second

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
		deadline := time.Now().Add(waitFor)
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

// allCalls joins the calls of every goroutine of tr.
func allCalls(tr trace) string {
	var all []string
	for _, c := range tr.calls {
		all = append(all, strings.Join(c, " "))
	}
	return strings.Join(all, " ")
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
	all := allCalls(got)
	if !strings.Contains(all, "->test.inner <-test.inner") || strings.Contains(all, "test.recovers") || w.Calls == 0 {
		t.Errorf("capture %+v holds %.300s", w, all)
	}
}

// TestResumeDuringCapture: recording switched on during a capture of a
// paused program stays on when the capture ends.
func TestResumeDuringCapture(t *testing.T) {
	defer useFlight(t, options{paused: true, every: 5 * time.Millisecond})()
	recording.Store(false)
	done := make(chan error, 1)
	go func() {
		_, err := CaptureContext(context.Background(), io.Discard, 50*time.Millisecond)
		done <- err
	}()
	for !recording.Load() {
		time.Sleep(time.Millisecond) // the capture switches recording on
	}
	Resume() // and so does the program, or POST .../on
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !recording.Load() {
		t.Error("recording switched on during the capture is off after it")
	}
}

// TestCaptureCancelled ends a capture of a paused program early, as a
// client that goes away does: it writes nothing, and recording is off
// again as soon as it returns, not at the end of the window asked for.
func TestCaptureCancelled(t *testing.T) {
	defer useFlight(t, options{paused: true, every: 5 * time.Millisecond})()
	recording.Store(false)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var buf bytes.Buffer
	go func() {
		_, err := CaptureContext(ctx, &buf, time.Hour)
		done <- err
	}()
	for !recording.Load() {
		time.Sleep(time.Millisecond) // the capture switches recording on
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("CaptureContext cancelled returned %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a cancelled capture of an hour still runs after a minute")
	}
	if recording.Load() {
		t.Error("recording still on after the capture was cancelled")
	}
	if buf.Len() != 0 {
		t.Errorf("a cancelled capture wrote %d bytes", buf.Len())
	}
}

// TestSnapshotWithoutFlight checks that Snapshot says why it cannot.
func TestSnapshotWithoutFlight(t *testing.T) {
	defer useTracer(t, filepath.Join(t.TempDir(), "t.out"), options{})()
	if _, err := Snapshot(&bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "CALLTRAIL_MODE=flight") {
		t.Errorf("Snapshot without a flight recorder: %v", err)
	}
}

// triggered waits for the trigger files in dir and reads the first.
func triggered(t *testing.T, dir string) (trace, []string) {
	t.Helper()
	for deadline := time.Now().Add(waitFor); ; {
		files, _ := filepath.Glob(filepath.Join(dir, "calltrail-*.trace"))
		if len(files) > 0 {
			time.Sleep(300 * time.Millisecond) // a second file, if any, would be written by now
			files, _ = filepath.Glob(filepath.Join(dir, "calltrail-*.trace"))
			return readTrace(t, files[0]), files
		}
		if time.Now().After(deadline) {
			t.Fatal("no trigger fired")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTriggerSlowCall checks that a slow call of the function a trigger
// names has the window written, with the chain that led to the call, and
// that a second slow call within the interval writes no second file.
func TestTriggerSlowCall(t *testing.T) {
	rules, err := parseTriggers("test.leaf>2ms")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	defer useFlight(t, options{every: 5 * time.Millisecond, triggers: rules, triggerDir: dir, triggerEvery: time.Minute})()
	for range 100 {
		call(&funcs[2], func() {}) // quick: no trigger
	}
	slow := func() {
		call(&funcs[0], func() {
			call(&funcs[1], func() { call(&funcs[2], func() { time.Sleep(5 * time.Millisecond) }) })
		})
	}
	slow()
	slow()
	got, files := triggered(t, dir)
	if len(files) != 1 {
		t.Errorf("%d files written within the interval, want 1", len(files))
	}
	all := allCalls(got)
	if !strings.Contains(all, "->test.outer ->test.inner ->test.leaf <-test.leaf <-test.inner <-test.outer") || !strings.HasPrefix(got.end, "trigger test.leaf>2ms: a call of test.leaf took ") {
		t.Errorf("trigger file (ended %q) holds %.300s", got.end, all)
	}
}

// TestTriggerPanic checks the panic trigger on a panic recovered by the
// program.
func TestTriggerPanic(t *testing.T) {
	rules, _ := parseTriggers("panic")
	dir := t.TempDir()
	defer useFlight(t, options{every: 5 * time.Millisecond, triggers: rules, triggerDir: dir, triggerEvery: time.Minute})()
	call(&funcs[5], func() { // test.recovers
		defer func() { recover() }()
		call(&funcs[4], func() { panic("boom") }) // test.panics
	})
	got, _ := triggered(t, dir)
	all := allCalls(got)
	if !strings.Contains(all, "<-test.panics (panic)") || !strings.Contains(got.end, "test.panics left by a panic") {
		t.Errorf("trigger file (ended %q) holds %.300s", got.end, all)
	}
}

// TestTriggerAtEnd checks that a window fired just before the trace
// ends, as when a panic is about to kill the program, is written before
// the end is: the program may be gone before the aftermath passes.
func TestTriggerAtEnd(t *testing.T) {
	rules, _ := parseTriggers("panic")
	dir := t.TempDir()
	defer useFlight(t, options{every: time.Hour, triggers: rules, triggerDir: dir, triggerEvery: time.Minute})()
	func() {
		defer func() { recover() }()
		call(&funcs[4], func() { panic("boom") }) // test.panics
	}()
	tr.w.request("panic", false) // as a panic leaving main does
	files, _ := filepath.Glob(filepath.Join(dir, "calltrail-*.trace"))
	if len(files) != 1 {
		t.Fatalf("%d trigger files when the trace ended, want 1", len(files))
	}
	got := readTrace(t, files[0])
	if all := allCalls(got); !strings.Contains(all, "<-test.panics (panic)") || !strings.Contains(got.end, "test.panics left by a panic") {
		t.Errorf("trigger file (ended %q) holds %.300s", got.end, all)
	}
}

func TestParseTriggers(t *testing.T) {
	for _, bad := range []string{"main.D", "main.D>", ">5ms", "main.D>fast", "panic,", "main.D>-1s", "span:>1s", "span:GET", "main.D>>5ms", "main.D<5ms"} {
		if _, err := parseTriggers(bad); err == nil {
			t.Errorf("parseTriggers(%q) accepted", bad)
		}
	}
	rules, err := parseTriggers("main.(*T).M>50ms, panic, main.D:error, span:GET /a>b>1s")
	if err != nil || len(rules) != 4 || rules[0].fn != "main.(*T).M" || rules[0].over != 50*time.Millisecond || !rules[1].panic ||
		rules[2].fn != "main.D" || !rules[2].failed || !rules[3].span || rules[3].fn != "GET /a>b" || rules[3].over != time.Second {
		t.Errorf("parseTriggers: %+v, %v", rules, err)
	}
}

// TestTriggerError checks the error trigger: calls returning nil leave
// it alone, the first failed call fires it.
func TestTriggerError(t *testing.T) {
	rules, _ := parseTriggers("test.fails:error")
	dir := t.TempDir()
	defer useFlight(t, options{every: 5 * time.Millisecond, triggers: rules, triggerDir: dir, triggerEvery: time.Minute})()
	for range 100 {
		fails(0)
	}
	// Long enough for a wrong trigger to show: ten of the writer's
	// cycles to scan the calls, then the wait before a fired trigger
	// writes its file, and as much again.
	time.Sleep(50*time.Millisecond + 2*triggerAfter)
	if files, _ := filepath.Glob(filepath.Join(dir, "*.trace")); len(files) != 0 {
		t.Fatalf("calls returning nil fired the trigger: %v", files)
	}
	call(&funcs[0], func() { fails(2) })
	got, _ := triggered(t, dir)
	all := allCalls(got)
	if !strings.Contains(all, `<-test.fails err=*fs.PathError "open x: file does not exist" <-test.outer`) ||
		!strings.HasPrefix(got.end, "trigger test.fails:error: a call of test.fails returned an error") {
		t.Errorf("trigger file (ended %q) holds %.300s", got.end, all)
	}
}

// TestTriggerRulesOfAFunction: each rule naming a function is followed,
// not only the last of them; a rule naming a function no traced call ran
// is said so on stderr when the trace ends, the others not.
func TestTriggerRulesOfAFunction(t *testing.T) {
	rules, _ := parseTriggers("test.fails:error, test.fails>1h, test.nosuch>1ms")
	dir := t.TempDir()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = pw
	defer func() { os.Stderr = stderr }()
	stop := useFlight(t, options{every: 5 * time.Millisecond, triggers: rules, triggerDir: dir, triggerEvery: time.Minute})
	call(&funcs[0], func() { fails(2) })
	got, _ := triggered(t, dir)
	if !strings.HasPrefix(got.end, "trigger test.fails:error: a call of test.fails returned an error") {
		t.Errorf("trigger file ended %q", got.end)
	}
	tr.w.request("end", false)
	stop()
	pw.Close()
	said, _ := io.ReadAll(pr)
	if !strings.Contains(string(said), "trigger test.nosuch>1ms: no call of test.nosuch was traced") || strings.Contains(string(said), "no call of test.fails") {
		t.Errorf("stderr when the trace ended: %q", said)
	}
}

// TestSnapshotTimes: the times a snapshot gives the calls open at its
// window's start are when they started, their time counts from the
// window's start, and no time in it is past its window's end, on a clock whose ticks are not nanoseconds as on one
// whose are.
func TestSnapshotTimes(t *testing.T) {
	defer useFlight(t, options{buffer: 256 << 10, every: 2 * time.Millisecond})()
	time.Sleep(50 * time.Millisecond)
	before := elapsed()
	call(&funcs[0], func() { // test.outer, open at the window's start
		after := elapsed()
		time.Sleep(20 * time.Millisecond) // its time before the window
		slept := elapsed()
		deadline := time.Now().Add(waitFor)
		for time.Now().Before(deadline) {
			for range 1000 {
				call(&funcs[2], func() {}) // test.leaf
			}
			// Until the window starts after the sleep.
			if w, err := Snapshot(io.Discard); err == nil && w.Start > slept {
				break
			}
		}
		var buf bytes.Buffer
		w, err := Snapshot(&buf)
		if err != nil {
			t.Fatal(err)
		}
		r, err := tracefile.NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		slack := time.Millisecond.Nanoseconds()
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			if ev.Kind == tracefile.EnterEvent && r.Func(ev.Func).Name == "test.outer" {
				if ev.Time < int64(before)-slack || ev.Time > int64(after)+slack {
					t.Errorf("test.outer entered at %v, want between %v and %v", time.Duration(ev.Time), before, after)
				}
			}
			if ev.Kind != tracefile.GoroutineEvent && ev.Time > int64(w.End)+slack {
				t.Errorf("%v event of %s at %v, after the window's end %v", ev.Kind, r.Func(ev.Func).Name, time.Duration(ev.Time), w.End)
				break
			}
			// What the open call did before the window is not in
			// it: its time counts from the window's start. (An
			// event drained into the window's first segment may
			// precede its start by a little.)
			if ev.Kind == tracefile.ExitEvent && ev.Start < int64(w.Start)-slack {
				t.Errorf("the exit of %s counts from %v, before the window's start %v", r.Func(ev.Func).Name, time.Duration(ev.Start), w.Start)
			}
		}
	})
}

// TestSnapshotLateEvent: an event stamped before a drain of the rings
// and published after it, by a goroutine the scheduler stopped between
// the two, goes into a later segment than its time. The window starts at
// it, so that no call in a snapshot starts before its window.
func TestSnapshotLateEvent(t *testing.T) {
	defer useFlight(t, options{buffer: 256 << 10, every: 2 * time.Millisecond})()
	if tr.perP == 0 {
		t.Skip("no shared ring")
	}
	call(&funcs[2], func() {}) // test.leaf, given its id
	time.Sleep(5 * time.Millisecond)
	stamped, at := clock.Now(), elapsed()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		for range 1000 {
			call(&funcs[1], func() {}) // test.middle
		}
		// Until the window starts after the stamp.
		if w, err := Snapshot(io.Discard); err == nil && w.Start > at+time.Millisecond {
			break
		}
	}
	// Goroutine g's call of test.leaf, published now.
	const g = 1 << 30
	s := &tr.rings[tr.perP]
	pos, ok := s.TakeShared(2)
	if !ok {
		t.Fatal("no room in the shared ring")
	}
	ring.Put(s.At(pos), tracewrite.RawEnter(g, funcs[2].id.Load()&fidMask), stamped)
	ring.Put(s.At(pos+1), tracewrite.RawExit(g, records.Return), stamped+1)
	var buf bytes.Buffer
	w, err := Snapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if w.Start > at {
		t.Errorf("the window starts at %v, after the call at %v it holds", w.Start, at)
	}
	r, err := tracefile.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if ev.Kind == tracefile.ExitEvent && ev.G == g {
			found = true
			if ev.Start < int64(w.Start) {
				t.Errorf("the late call starts at %v, before the window's start %v", time.Duration(ev.Start), w.Start)
			}
		}
	}
	if !found {
		t.Error("the late call is not in the snapshot")
	}
}

// TestSnapshotSpawnedFrom: goroutines started by a call still open in a
// snapshot's window are tied to that call's chain in the snapshot, as in
// a whole trace, whether they started before the window (their records
// come after the calls open at its start) or in it (their records are in
// the window's events, where they happened).
func TestSnapshotSpawnedFrom(t *testing.T) {
	if !gstate.HasParents() {
		t.Skip("goroutine records name no parent on this platform: there is nothing to tie")
	}
	for _, before := range []bool{true, false} {
		t.Run(fmt.Sprintf("before=%v", before), func(t *testing.T) { snapshotSpawnedFrom(t, before) })
	}
}

func snapshotSpawnedFrom(t *testing.T, before bool) {
	defer useFlight(t, options{buffer: 256 << 10, every: 2 * time.Millisecond})()
	again, done := make(chan struct{}), make(chan struct{})
	// The goroutines have ended before the tracer is torn down, whether
	// the test failed or not: each one's last exit is written after
	// ran.Done.
	var started, ran, exited sync.WaitGroup
	goOn := sync.OnceFunc(func() { close(again) })
	end := sync.OnceFunc(func() { close(done) })
	defer func() { goOn(); end(); exited.Wait() }()
	call(&funcs[0], func() { // test.outer, open through the window
		for range 3 {
			started.Add(1)
			ran.Add(1)
			exited.Add(1)
			go func() {
				defer exited.Done()
				call(&funcs[2], func() { started.Done() }) // test.leaf
				<-again
				call(&funcs[1], func() { ran.Done() }) // test.inner, in the window
				<-done
			}()
		}
		started.Wait()
		deadline := time.Now().Add(waitFor)
		for before && tr.w.flight.droppedSegments() < 2 && time.Now().Before(deadline) {
			for range 1000 {
				call(&funcs[2], func() {}) // test.leaf
			}
		}
		if !before && tr.w.flight.droppedSegments() > 0 {
			t.Fatal("segments were dropped: the window does not hold the goroutines' start")
		}
		goOn()
		ran.Wait()
		var buf bytes.Buffer
		if _, err := Snapshot(&buf); err != nil {
			t.Fatal(err)
		}
		end()
		r, err := tracefile.NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		p := analysis.Analyze(r, analysis.Options{})
		// The goroutines' first call in the window.
		first := "test.inner"
		if !before {
			first = "test.leaf"
		}
		var root *analysis.Node
		for _, n := range p.Root.Children {
			if p.Name(n.Func) == first {
				root = n
			}
		}
		if root == nil {
			t.Fatalf("the snapshot has no goroutine starting in %s", first)
		}
		var from []string
		for n, count := range root.SpawnedFrom {
			from = append(from, fmt.Sprintf("%s ×%d", p.Name(n.Func), count))
		}
		if len(from) != 1 || from[0] != "test.outer ×3" {
			t.Errorf("goroutines starting in %s were started from %v, want test.outer ×3", first, from)
		}
	})
}

// TestOpenCallsHeld: the time a goroutine waited for the trace writer is
// its innermost open call's when the wait began, and its callers', and
// not a call's that began after it: a trigger on a slow call measures the
// call, not the writer.
func TestOpenCallsHeld(t *testing.T) {
	o := openCalls{}
	cur := cursor{o: o}
	var ended []openCall
	for i, e := range []tracewrite.ScanEvent{
		{G: 1, Kind: tracefile.EnterEvent, Func: 1, Ticks: 0},
		{G: 1, Kind: tracefile.EnterEvent, Func: 2, Ticks: 10},
		{G: 2, Kind: tracefile.EnterEvent, Func: 4, Ticks: 15}, // another goroutine's, between
		{G: 1, Kind: tracefile.ExitEvent, Ticks: 20},
		{G: 1, Kind: tracefile.HeldEvent, From: 20, Ticks: 1020}, // after 2's exit: 1's
		{G: 1, Kind: tracefile.EnterEvent, Func: 3, Ticks: 2000},
		{G: 2, Kind: tracefile.HeldEvent, From: 2001, Ticks: 2002}, // 4's
		{G: 1, Kind: tracefile.HeldEvent, From: 1990, Ticks: 2000}, // before 3's enter: 1's
		{G: 1, Kind: tracefile.HeldEvent, From: 2005, Ticks: 2010}, // in 3, for a value
		{G: 1, Kind: tracefile.ExitEvent, Ticks: 2100},
		{G: 2, Kind: tracefile.ExitEvent, Ticks: 2150},
		{G: 2, Kind: tracefile.ExitEvent, Ticks: 2160}, // its enter came before: none ended
		{G: 1, Kind: tracefile.ExitEvent, Ticks: 2200},
	} {
		if c, ok := cur.apply(e); ok {
			ended = append(ended, c)
		}
		if i == 7 {
			// What a window between the events would find.
			cur.flush()
			if want := (openCalls{1: {{fn: 1, held: 1010}, {fn: 3, ticks: 2000}}, 2: {{fn: 4, ticks: 15, held: 1}}}); !reflect.DeepEqual(o, want) {
				t.Errorf("open calls %+v, want %+v", o, want)
			}
		}
	}
	cur.flush()
	want := []openCall{{fn: 2, ticks: 10}, {fn: 3, ticks: 2000, held: 5}, {fn: 4, ticks: 15, held: 1}, {fn: 1, ticks: 0, held: 1015}}
	if !slices.Equal(ended, want) || len(o) != 0 {
		t.Errorf("calls ended %+v, want %+v; %d goroutines left open: %v", ended, want, len(o), o)
	}
}

// TestBadEnvironment: a value of a calltrail variable that means nothing
// is refused with the variable named, never ignored; a trigger may not
// write more than a window a second.
func TestBadEnvironment(t *testing.T) {
	for _, c := range []struct{ k, v, want string }{
		{"CALLTRAIL", "pasued", "CALLTRAIL=\"pasued\""},
		{"CALLTRAIL_CLOCK", "rdtsc", "CALLTRAIL_CLOCK=\"rdtsc\""},
		{"CALLTRAIL_TRIGGER_EVERY", "0", "at least 1s"},
		{"CALLTRAIL_TRIGGER_EVERY", "1ns", "at least 1s"},
		{"CALLTRAIL_TRIGGER_DIR", "/nonexistent/calltrail", "CALLTRAIL_TRIGGER_DIR=\"/nonexistent/calltrail\": no such directory"},
		{"CALLTRAIL_TRIGGER_DIR", "flight_test.go", "no such directory"}, // a file
	} {
		t.Run(c.k+"="+c.v, func(t *testing.T) {
			t.Setenv("CALLTRAIL_TRIGGER", "main.D>1ms")
			t.Setenv(c.k, c.v)
			if _, err := optionsFromEnv(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s=%q: %v, want an error saying %s", c.k, c.v, err, c.want)
			}
		})
	}
	for _, v := range []string{"", "on", "paused"} {
		t.Setenv("CALLTRAIL", v)
		if _, err := optionsFromEnv(); err != nil {
			t.Errorf("CALLTRAIL=%q: %v", v, err)
		}
	}
}

// TestWindowCheckpoint takes windows of the last moments of a flight
// recorder as segments come and go, as top does: each finds the calls
// open at its start by following on from where the window before it
// stopped (flight.ck), and must find what following the whole window
// from its oldest segment finds, and the same goroutine records.
func TestWindowCheckpoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	f := newFlight(8<<10, 0, nil)
	stacks := map[uint64]int{}
	var tick int64
	followed := 0 // windows that followed on from a checkpoint
	for seg := range 300 {
		start := tick
		data := randomSegment(t, rng, f, stacks, &tick)
		f.add(segment{data: data, start: start, end: tick, ticks: tick})
		for range rng.IntN(3) {
			// From the oldest segment's start to past the newest.
			f.mu.Lock()
			lo, hi := f.segs[0].start, tick+100
			ck := f.ck.open != nil
			ref := &flight{segs: f.segs, open: f.open, openSpans: f.openSpans, gs: f.gs, dropped: f.dropped, before: f.before, bytes: f.bytes}
			ref.budget.Store(f.budget.Load())
			f.mu.Unlock()
			since := time.Duration(lo + rng.Int64N(hi-lo))
			segs, open, spans, gs, w := f.window(since)
			wantSegs, wantOpen, wantSpans, wantGs, wantW := ref.window(since)
			if len(segs) != len(wantSegs) || !reflect.DeepEqual(open, wantOpen) || !reflect.DeepEqual(spans, wantSpans) ||
				!reflect.DeepEqual(gs, wantGs) || w != wantW {
				t.Fatalf("segment %d, window from %v: %d segments, open %v, goroutines %v, %+v; following the whole window, %d, %v, %v, %+v",
					seg, since, len(segs), open, gs, w, len(wantSegs), wantOpen, wantGs, wantW)
			}
			clear(open) // the caller's to change
			if ck {
				followed++
			}
		}
	}
	if f.dropped < 100 || followed < 100 {
		t.Errorf("%d segments dropped, %d windows followed on from another's: the test tests too little", f.dropped, followed)
	}
}

// TestWindowsConcurrent takes windows from two goroutines while segments
// come and go, as two clients of the endpoint may: for the race detector,
// over the checkpoint they share.
func TestWindowsConcurrent(t *testing.T) {
	f := newFlight(8<<10, 0, nil)
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				f.mu.Lock()
				var end int64
				if n := len(f.segs); n > 0 {
					end = f.segs[n-1].end
				}
				f.mu.Unlock()
				f.window(time.Duration(end - 500))
			}
		}()
	}
	rng := rand.New(rand.NewPCG(29, 2))
	stacks := map[uint64]int{}
	var tick int64
	for range 300 {
		start := tick
		data := randomSegment(t, rng, f, stacks, &tick)
		f.add(segment{data: data, start: start, end: tick, ticks: tick})
	}
	close(done)
	wg.Wait()
}

// randomSegment encodes a segment of random enters, exits and waits of
// five goroutines, from tick on, stacks their depths, and records in f
// the goroutines it starts.
func randomSegment(t *testing.T, rng *rand.Rand, f *flight, stacks map[uint64]int, tick *int64) []byte {
	var b tracewrite.Batch
	for range 50 + rng.IntN(200) {
		*tick += 1 + rng.Int64N(50)
		g := uint64(1 + rng.IntN(5))
		switch n := stacks[g]; {
		case n == 0 && rng.IntN(4) == 0:
			f.goroutine(records.Goroutine{ID: g}, *tick)
			fallthrough
		case n == 0 || rng.IntN(100) < 52:
			b.Enter(g, uint32(1+rng.IntN(7)), *tick)
			stacks[g]++
		case rng.IntN(20) == 0:
			b.Held(g, *tick-rng.Int64N(100), *tick)
		default:
			b.Exit(g, records.Return, *tick)
			stacks[g]--
		}
	}
	var buf bytes.Buffer
	enc := tracewrite.NewChunkEncoder(&buf)
	enc.Clock(*tick, *tick)
	enc.Events(&b)
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkFollow follows a segment of 120,000 events, the test
// service's calls (A, B and D, nested), as the flight recorder does for
// each segment it drops and each snapshot: the writer's work on every
// event in flight mode, on top of encoding it. (The script's smoke run
// of the benchmarks runs it a thousand times.)
func BenchmarkFollow(b *testing.B) {
	const loops = 20_000
	var batch tracewrite.Batch
	tick := int64(0)
	for range loops {
		batch.Enter(1, 2, tick)
		batch.Enter(1, 3, tick+5)
		batch.Enter(1, 4, tick+9)
		batch.Exit(1, records.Return, tick+20)
		batch.Exit(1, records.Return, tick+25)
		batch.Exit(1, records.Return, tick+30)
		tick += 40
	}
	var buf bytes.Buffer
	enc := tracewrite.NewChunkEncoder(&buf)
	enc.Events(&batch)
	if err := enc.Flush(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	for range b.N {
		follow(buf.Bytes(), openCalls{1: {{fn: 1}}}, openSpans{})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(6*loops), "ns/event")
}
