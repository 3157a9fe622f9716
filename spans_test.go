//go:build calltrail

package calltrail

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calltrail/calltrail/tracefile"
)

// TestSpansRecorded checks that a span's start and end are events of the
// goroutines that made them, named in the span table, and that the calls
// made between them read as the span's, and those after it as no span's.
func TestSpansRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.out")
	stop := useTracer(t, path, options{})
	for i := range funcs {
		funcs[i].id.Store(0)
	}
	trace := [16]byte{1, 2, 3}
	root, child := [8]byte{9}, [8]byte{10}
	var wg sync.WaitGroup
	SpanStart(trace, root, [8]byte{7}, true, 2, "GET /orders")
	call(&funcs[0], func() {
		SpanStart(trace, child, root, false, 1, "load")
		call(&funcs[1], func() {})
		wg.Add(1)
		go func() { // ends the span on another goroutine
			defer wg.Done()
			SpanEnd(child)
		}()
		wg.Wait()
		call(&funcs[2], func() {})
	})
	SpanEnd(root)
	SpanEnd(root) // ended twice: recorded once
	call(&funcs[2], func() {})
	stop()
	readTrace(t, path) // the summary agrees with the events

	r := openTrace(t, path)
	name := func(id tracefile.SpanID) string {
		if id == (tracefile.SpanID{}) {
			return "-"
		}
		s, _ := r.Span(id)
		return s.Name
	}
	var got []string
	var ev tracefile.Event
	for {
		if err := r.Read(&ev); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case tracefile.EnterEvent:
			got = append(got, r.Func(ev.Func).Name+"@"+name(ev.Span))
		case tracefile.SpanStartEvent:
			got = append(got, "start "+name(ev.Span))
		case tracefile.SpanEndEvent:
			got = append(got, "end "+name(ev.Span))
		}
	}
	want := "start GET /orders, test.outer@GET /orders, start load, test.inner@load, end load, test.leaf@GET /orders, end GET /orders, test.leaf@-"
	if s := strings.Join(got, ", "); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
	s, ok := r.Span(root)
	if !ok || s.Trace != trace || s.Parent != [8]byte{7} || !s.Remote || s.Kind != 2 {
		t.Errorf("root span: %+v, %v", s, ok)
	}
	if s, _ := r.Span(child); s.Parent != root || s.Remote || s.Kind != 1 {
		t.Errorf("child span: %+v", s)
	}
}

// TestFlightOpenSpans keeps a span open while the flight recorder drops
// the segment that holds its start: the snapshot starts it at its true
// time, before the window, so that the calls in the window that ran under
// it read as its, and the span's name comes with it. The entries of the
// spans that ended long before the window stay out of the snapshot, but
// for the parent of a span in it.
func TestFlightOpenSpans(t *testing.T) {
	defer useFlight(t, options{buffer: 256 << 10, every: 2 * time.Millisecond})()
	f := tr.w.flight
	span := [8]byte{42}
	SpanStart([16]byte{1}, span, [8]byte{}, false, 2, "GET /long")
	old, parent, child := [8]byte{43}, [8]byte{44}, [8]byte{45}
	SpanStart([16]byte{2}, old, [8]byte{}, false, 2, "GET /old")
	SpanEnd(old)
	SpanStart([16]byte{3}, parent, [8]byte{}, false, 2, "GET /parent")
	SpanEnd(parent)
	call(&funcs[5], func() {}) // test.recovers: first, to be dropped
	deadline := time.Now().Add(waitFor)
	for f.droppedSegments() < spanSlack+4 && time.Now().Before(deadline) {
		for range 1000 {
			call(&funcs[3], func() { call(&funcs[2], func() {}) })
		}
	}
	done := make(chan bool)
	go func() {
		SpanStart([16]byte{3}, child, parent, false, 1, "send") // in the window, its parent long ended
		SpanEnd(child)
		done <- true
	}()
	<-done
	call(&funcs[8], func() {}) // test.root, in the window, under the span
	var buf bytes.Buffer
	w, err := Snapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	SpanEnd(span)
	if w.Dropped < spanSlack+4 {
		t.Fatalf("too few segments dropped: %+v", w)
	}
	path := filepath.Join(t.TempDir(), "snapshot.out")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	readTrace(t, path) // the summary agrees with the events
	r, err := tracefile.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var started, root, recovers int
	var ev tracefile.Event
	for r.Read(&ev) == nil {
		switch {
		case ev.Kind == tracefile.SpanStartEvent && ev.Span == span:
			started++
			if ev.Time >= int64(w.Start) {
				t.Errorf("the span starts at %v, in the window from %v", time.Duration(ev.Time), w.Start)
			}
		case ev.Kind == tracefile.EnterEvent && r.Func(ev.Func).Name == "test.root":
			root++
			if ev.Span != span {
				t.Errorf("test.root ran under span %s, want %x", ev.Span, span)
			}
		case ev.Kind == tracefile.EnterEvent && r.Func(ev.Func).Name == "test.recovers":
			recovers++
		}
	}
	if s, _ := r.Span(span); started != 1 || root != 1 || recovers != 0 || s.Name != "GET /long" {
		t.Errorf("span started %d times, test.root %d, test.recovers %d; span %+v", started, root, recovers, s)
	}
	for _, c := range []struct {
		id   [8]byte
		want string
	}{{old, ""}, {parent, "GET /parent"}, {child, "send"}} {
		if s, _ := r.Span(c.id); s.Name != c.want {
			t.Errorf("span %x in the snapshot's table: %q, want %q", c.id, s.Name, c.want)
		}
	}
}

// TestTriggerSlowSpan checks the span trigger: spans of other names, and
// of its name but quick, leave it alone; the first slow one fires it, and
// the window written holds the span and its calls. The bound leaves room
// for a quick span under emulation (qemu), where the first takes
// milliseconds.
func TestTriggerSlowSpan(t *testing.T) {
	rules, err := parseTriggers("span:GET /orders>50ms")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	defer useFlight(t, options{every: 5 * time.Millisecond, triggers: rules, triggerDir: dir, triggerEvery: time.Minute})()
	request := func(n byte, name string, d time.Duration) {
		id := [8]byte{n}
		SpanStart([16]byte{n}, id, [8]byte{}, false, 2, name)
		call(&funcs[0], func() { time.Sleep(d) })
		SpanEnd(id)
	}
	for i := range 50 {
		request(byte(i+1), "GET /orders", 0)
	}
	request(100, "GET /other", 100*time.Millisecond)
	// A trigger writes its file triggerAfter after the writer's next
	// cycle sees the span: wait for that, and more.
	time.Sleep(triggerAfter + 300*time.Millisecond)
	if files, _ := filepath.Glob(filepath.Join(dir, "calltrail-*.trace")); len(files) != 0 {
		t.Fatalf("quick spans, and a slow span of another name, fired the trigger: %v", files)
	}
	request(101, "GET /orders", 100*time.Millisecond)
	got, files := triggered(t, dir)
	if len(files) != 1 {
		t.Fatalf("%d files written, want 1", len(files))
	}
	if !strings.HasPrefix(got.end, `trigger span:GET /orders>50ms: span "GET /orders" (6500000000000000) took `) {
		t.Errorf("trigger file ended %q", got.end)
	}
}
