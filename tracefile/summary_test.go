package tracefile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

// summarized builds a trace as the runtime writes one, ending with the
// summary of its events: clock points between the events, so that times
// convert at more than one rate, a panic, a call left open and a reason.
func summarized(t testing.TB, reason string) []byte {
	var buf bytes.Buffer
	e, err := tracewrite.NewEncoder(&buf, map[string]string{"program": "summarized", "go": "go1.26.8", "clock": "tsc"})
	if err != nil {
		t.Fatal(err)
	}
	var tot tracewrite.Totals
	clock := func(ticks, ns int64) {
		e.Clock(ticks, ns)
		tot.Clock(ticks, ns)
	}
	// events writes b, counting what it holds as a snapshot does: by
	// scanning its chunk.
	events := func(b *tracewrite.Batch) {
		e.Flush()
		n := buf.Len()
		e.Events(b)
		e.Flush()
		if err := tracewrite.ScanEvents(buf.Bytes()[n:], tot.Count); err != nil {
			t.Fatal(err)
		}
		tot.Fold()
	}
	clock(1000, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.main", File: "main.go", Line: 10}, {Name: "main.A", File: "main.go", Line: 20}, {Name: "main.B", File: "main.go", Line: 30}, {Name: "main.unused", File: "main.go", Line: 40}})
	var b tracewrite.Batch
	b.Enter(4, 1, 1000)
	b.Enter(4, 2, 1010)
	b.Goroutine(tracefile.Goroutine{ID: 5, Parent: 4, CreatorFunc: 1, CreatorLine: 12, StartFunc: 3}, 1020)
	b.Enter(5, 3, 1020)
	b.Exit(5, tracefile.Panic, 1040)
	b.Exit(4, tracefile.Return, 1100)
	// The record of a goroutine that makes no call, as a snapshot holds
	// of goroutines gone before its window: it counts no goroutine.
	b.Goroutine(tracefile.Goroutine{ID: 7, Parent: 4, CreatorFunc: 1, StartFunc: 2}, 1100)
	clock(3000, 1000)
	events(&b)
	b.Enter(4, 3, 5000) // main.B, never left, nor main.main
	clock(6000, 2400)
	events(&b)
	e.Stats(tracefile.Stats{Calls: 4, DroppedCalls: 2, Flushes: 2, Waits: 1, HeldNs: 300})
	e.End(reason, time.Unix(0, 0))
	e.Summary(&tot)
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func scanSummary(t *testing.T, data []byte) tracefile.Summary {
	t.Helper()
	r, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	s, err := tracefile.Summarize(r)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSummary: the summary a trace ends with says what reading every
// event does, and is used only when it is the whole, last chunk.
func TestSummary(t *testing.T) {
	for _, reason := range []string{"main returned", "", strings.Repeat("long ", 100)} {
		data := summarized(t, reason)
		got, ok, err := tracefile.ReadSummary(bytes.NewReader(data), int64(len(data)))
		if err != nil || !ok {
			t.Fatalf("reason %.10q: no summary read: %v", reason, err)
		}
		want := scanSummary(t, data)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("the summary says\n%+v\nreading every event says\n%+v", got, want)
		}
		// What it counts, from the events above.
		if got.Calls != 4 || got.Unfinished != 2 || got.Panics != 1 || got.Called != 3 || got.Funcs != 4 || got.Goroutines != 2 || got.End != reason || got.Stats.DroppedCalls != 2 {
			t.Errorf("summary %+v", got)
		}
		// The clock point (6000, 2400) after the last event (5000
		// ticks, 1920ns): the trace lasts until its latest.
		if want := time.Duration(2400); got.Duration != want {
			t.Errorf("duration %v, want %v", got.Duration, want)
		}
	}

	data := summarized(t, "main returned")
	flip := func(i int) []byte {
		d := bytes.Clone(data)
		d[i] ^= 0x10
		return d
	}
	for name, d := range map[string][]byte{
		"without one":           sample(t),
		"cut by a byte":         data[:len(data)-1],
		"its checksum":          flip(len(data) - 1),
		"its length":            flip(len(data) - 6),
		"its counts":            flip(len(data) - 30),
		"a byte after it":       append(bytes.Clone(data), 0),
		"a chunk after it":      append(bytes.Clone(data), summarized(t, "again")[len(data)-40:]...),
		"the header only":       data[:20],
		"a length past the top": append(bytes.Clone(data[:40]), 0xff, 0xff, 0, 0, 0, 0),
	} {
		if s, ok, err := tracefile.ReadSummary(bytes.NewReader(d), int64(len(d))); ok {
			t.Errorf("%s: a summary was read: %+v (%v)", name, s, err)
		}
	}

	// A File reads it the same way.
	path := filepath.Join(t.TempDir(), "t.trace")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if s, ok := f.Summary(); !ok || !reflect.DeepEqual(s, scanSummary(t, data)) {
		t.Errorf("File.Summary: %v %+v", ok, s)
	}
}
