//go:build calltrail

package calltrail

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/calltrail/calltrail/tracefile"
)

// fresh lets a test start tracing as a program that has not yet: TestMain
// stopped the tracer init started; the test's is stopped, and the old one
// back, when it ends.
func fresh(t *testing.T) {
	old := tr
	use(nil)
	for i := range funcs {
		funcs[i].id.Store(0)
	}
	sites = sync.Map{}
	t.Cleanup(func() {
		Stop()
		use(old)
		sites = sync.Map{}
	})
}

// readBytes reads back a trace held in memory, as readTrace reads a file.
func readBytes(t *testing.T, data []byte) (trace, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.out")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	end, _ := r.End()
	return readTrace(t, path), end
}

// TestStart: a program traces itself to a writer of its own, with
// Options as the environment would have set them; a second start is
// refused; Stop ends the trace without closing the writer.
func TestStart(t *testing.T) {
	fresh(t)
	var buf closeCounter
	if err := Start(&buf, Options{Flush: 5 * time.Millisecond, Buffer: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if err := Start(io.Discard, Options{}); !errors.Is(err, ErrStarted) {
		t.Errorf("a second Start: %v, want ErrStarted", err)
	}
	if err := NewFlightRecorder(Options{}).Start(); !errors.Is(err, ErrStarted) {
		t.Errorf("a flight recorder after Start: %v, want ErrStarted", err)
	}
	call(&funcs[0], func() { call(&funcs[2], func() {}) })
	Stop()
	if buf.closed {
		t.Error("Stop closed the program's writer")
	}
	got, end := readBytes(t, buf.Bytes())
	var calls []string
	for _, cs := range got.calls {
		calls = append(calls, cs...)
	}
	if want := []string{"->test.outer", "->test.leaf", "<-test.leaf", "<-test.outer"}; !reflect.DeepEqual(calls, want) || end != "stopped" {
		t.Errorf("trace: %q, end %q; want %q, stopped", calls, end, want)
	}
}

// TestStartPaused: Options.Paused records nothing until Resume.
func TestStartPaused(t *testing.T) {
	fresh(t)
	var buf bytes.Buffer
	if err := Start(&buf, Options{Paused: true}); err != nil {
		t.Fatal(err)
	}
	call(&funcs[0], func() {})
	Resume()
	call(&funcs[2], func() {})
	Stop()
	got, _ := readBytes(t, buf.Bytes())
	var calls []string
	for _, cs := range got.calls {
		calls = append(calls, cs...)
	}
	if want := []string{"->test.leaf", "<-test.leaf"}; !reflect.DeepEqual(calls, want) {
		t.Errorf("trace: %q, want %q", calls, want)
	}
}

// TestFlightRecorder: the recorder keeps the calls in memory and writes
// them when asked, as many bytes as it says; stopped, it is no longer
// enabled.
func TestFlightRecorder(t *testing.T) {
	fresh(t)
	fr := NewFlightRecorder(Options{Buffer: 1 << 20, Flush: 2 * time.Millisecond})
	if fr.Enabled() {
		t.Fatal("enabled before Start")
	}
	if err := fr.Start(); err != nil {
		t.Fatal(err)
	}
	if !fr.Enabled() || ReadCounters().Mode != "flight" {
		t.Fatalf("started: enabled %v, mode %q", fr.Enabled(), ReadCounters().Mode)
	}
	for range 3 {
		call(&funcs[0], func() {})
	}
	var buf bytes.Buffer
	n, err := fr.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) || n == 0 {
		t.Fatalf("WriteTo: %d bytes, %v; %d written", n, err, buf.Len())
	}
	got, _ := readBytes(t, buf.Bytes())
	outer := 0
	for _, cs := range got.calls {
		for _, c := range cs {
			if c == "->test.outer" {
				outer++
			}
		}
	}
	if outer != 3 {
		t.Errorf("the window holds %d calls of test.outer, want 3", outer)
	}
	fr.Stop()
	if fr.Enabled() {
		t.Error("enabled after Stop")
	}
}

// closeCounter is a buffer that says whether it was closed.
type closeCounter struct {
	bytes.Buffer
	closed bool
}

func (c *closeCounter) Close() error { c.closed = true; return nil }
