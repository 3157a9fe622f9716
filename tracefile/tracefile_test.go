package tracefile_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/internal/wire"
	"github.com/calltrail/calltrail/tracefile"
)

var update = flag.Bool("update", false, "rewrite golden files")

// sample builds a small trace the way the runtime would: two shards,
// goroutines interleaved in one of them, a goroutine record, a panic, a
// call left open, and ticks at 2 per nanosecond.
func sample(t testing.TB) []byte {
	var buf bytes.Buffer
	e, err := tracewrite.NewEncoder(&buf, map[string]string{"program": "sample", "go": "go1.26.8", "clock": "tsc"})
	if err != nil {
		t.Fatal(err)
	}
	e.Clock(1000, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.main", File: "main.go", Line: 10}, {Name: "main.A", File: "main.go", Line: 20}, {Name: "main.B", File: "main.go", Line: 30}})
	var b0, b1 tracewrite.Batch
	b1.Shard = 1
	b0.Enter(4, 1, 1000)
	b0.Enter(4, 2, 1010)
	b1.Goroutine(tracefile.Goroutine{ID: 5, Parent: 4, CreatorFunc: 1, CreatorLine: 12, StartFunc: 3}, 1020)
	b1.Enter(5, 3, 1020)
	b1.Enter(9, 2, 1021) // another goroutine in the same shard
	b1.Exit(5, tracefile.Return, 1040)
	b1.Exit(9, tracefile.Panic, 1030) // earlier than the previous event: negative delta
	b0.Exit(4, tracefile.Return, 1100)
	e.Clock(3000, 1000)
	e.Events(&b0)
	e.Events(&b1)
	b0.Enter(4, 3, 1200) // main.B, never left
	e.Events(&b0)
	e.Stats(tracefile.Stats{Calls: 5, DroppedCalls: 2, Flushes: 1, Waits: 3, HeldNs: 41000})
	e.End("main returned", time.Unix(0, 0))
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sampleWant is sample as Reader reports it: name@goroutine, times in ns.
const sampleWant = `enter main.main g4 t=0 d=1
enter main.A g4 t=5 d=2
exit main.A g4 t=50 d=2 return start=5
goroutine g5 t=10
enter main.B g5 t=10 d=1
enter main.A g9 t=10 d=1
exit main.B g5 t=20 d=1 return start=10
exit main.A g9 t=15 d=1 panic start=10
enter main.B g4 t=100 d=2
exit main.B g4 t=1000 d=2 unfinished start=100
exit main.main g4 t=1000 d=1 unfinished start=0
`

func dump(t testing.TB, data []byte) (string, *tracefile.Reader, error) {
	r, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		return "", nil, err
	}
	var sb strings.Builder
	for {
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return sb.String(), r, err
		}
		switch ev.Kind {
		case tracefile.EnterEvent:
			fmt.Fprintf(&sb, "enter %s g%d t=%d d=%d\n", r.Func(ev.Func).Name, ev.G, ev.Time, ev.Depth)
		case tracefile.ExitEvent:
			fmt.Fprintf(&sb, "exit %s g%d t=%d d=%d %s start=%d\n", r.Func(ev.Func).Name, ev.G, ev.Time, ev.Depth, ev.Exit, ev.Start)
		case tracefile.GoroutineEvent:
			fmt.Fprintf(&sb, "goroutine g%d t=%d\n", ev.G, ev.Time)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	got, r, err := dump(t, sample(t))
	if err != nil {
		t.Fatal(err)
	}
	if got != sampleWant {
		t.Errorf("events:\n%s\nwant:\n%s", got, sampleWant)
	}
	if g, ok := r.Goroutine(5); !ok || g.Parent != 4 || r.Func(g.CreatorFunc).Name != "main.main" || g.CreatorLine != 12 || r.Func(g.StartFunc).Name != "main.B" {
		t.Errorf("goroutine 5 = %+v, %v", g, ok)
	}
	if s := r.Stats(); s != (tracefile.Stats{Calls: 5, DroppedCalls: 2, Flushes: 1, Waits: 3, HeldNs: 41000}) {
		t.Errorf("stats = %+v", s)
	}
	if end, ok := r.End(); !ok || end != "main returned" {
		t.Errorf("end = %q, %v", end, ok)
	}
	if r.Meta().Program != "sample" || r.Version() != tracefile.Version {
		t.Errorf("meta = %v, version %d", r.Meta(), r.Version())
	}
}

// TestGolden pins the bytes of the format: a change here is a format
// change, which needs a new version number.
func TestGolden(t *testing.T) {
	got := sample(t)
	const golden = "testdata/sample.trace"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("encoding changed: %d bytes, golden file has %d (run go test -update if the format version changed too)", len(got), len(want))
	}
	// The golden file must stay readable by this reader.
	if s, _, err := dump(t, want); err != nil || s != sampleWant {
		t.Errorf("reading the golden file: %v\n%s", err, s)
	}
	// So must the same trace as written before the stats chunk counted
	// waits for room.
	old, err := os.ReadFile("testdata/sample-before-waits.trace")
	if err != nil {
		t.Fatal(err)
	}
	s, r, err := dump(t, old)
	if err != nil || s != sampleWant {
		t.Errorf("reading the older golden file: %v\n%s", err, s)
	}
	if st := r.Stats(); st != (tracefile.Stats{Calls: 5, DroppedCalls: 2, Flushes: 1}) {
		t.Errorf("older golden file: stats = %+v", st)
	}
}

func TestBadInput(t *testing.T) {
	good := sample(t)
	newer := append([]byte(tracefile.Magic), 2)
	flipped := bytes.Clone(good)
	flipped[len(flipped)-30] ^= 0x40
	tests := []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"empty", nil, tracefile.ErrEmpty, "empty"},
		{"foreign", []byte("\x7fELF\x02\x01\x01\x00 not a trace at all"), tracefile.ErrNotTrace, "not a calltrail trace"},
		{"short foreign", []byte("hi"), tracefile.ErrNotTrace, "not a calltrail trace"},
		{"header cut", []byte(tracefile.Magic[:7]), tracefile.ErrTruncated, "truncated"},
		{"newer", newer, nil, "newer than this calltrail reads"},
		{"no metadata", []byte(tracefile.Magic + "\x01"), tracefile.ErrTruncated, "no metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tracefile.NewReader(bytes.NewReader(tt.data))
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("got %v, want %v mentioning %q", err, tt.want, tt.msg)
			}
		})
	}
	_, _, err := dump(t, flipped)
	if !errors.Is(err, tracefile.ErrCorrupt) || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("flipped bit: got %v, want a checksum error", err)
	}
}

// TestTruncated cuts the sample at every byte: each cut reads cleanly up to
// its last whole chunk, then says the trace is truncated.
func TestTruncated(t *testing.T) {
	full := sample(t)
	for n := len(tracefile.Magic) + 2; n < len(full); n++ {
		got, r, err := dump(t, full[:n])
		if r == nil {
			if !errors.Is(err, tracefile.ErrTruncated) {
				t.Fatalf("cut at %d: %v, want ErrTruncated", n, err)
			}
			continue
		}
		if err != nil && !errors.Is(err, tracefile.ErrTruncated) {
			t.Fatalf("cut at %d: %v", n, err)
		}
		// Whatever was read must agree with the full trace: its enters
		// are the first enters of the full trace.
		if got, want := enters(got), enters(sampleWant); len(got) > len(want) || strings.Join(got, "\n") != strings.Join(want[:len(got)], "\n") {
			t.Fatalf("cut at %d read enters not at the start of the trace:\n%s", n, got)
		}
	}
}

func enters(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "enter") {
			out = append(out, l)
		}
	}
	return out
}

// TestHugeLength checks a chunk claiming an enormous length, in a tiny
// input, is refused without allocating anywhere near that length.
func TestHugeLength(t *testing.T) {
	data := append(sample(t)[:0:0], sample(t)...)
	data = append(data, wire.ChunkEvents, 0xff, 0xff, 0xff, 0x1f) // 64 MiB - 1
	data = append(data, make([]byte, 100)...)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, err := dump(t, data)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, tracefile.ErrTruncated) {
		t.Errorf("got %v, want ErrTruncated", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Errorf("reading %d bytes allocated %d bytes", len(data), grew)
	}
}

func FuzzReader(f *testing.F) {
	s := sample(f)
	f.Add(s)
	f.Add(s[:len(s)/2])
	f.Add([]byte(tracefile.Magic + "\x01"))
	f.Add(valueTrace("a string of values"))
	f.Add(coverageTrace(f, sampleCoverage))
	f.Add(summarized(f, "main returned"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The summary of whatever the input ends with is read without
		// a panic and within its bounds.
		if s, ok, _ := tracefile.ReadSummary(bytes.NewReader(data), int64(len(data))); ok && (uint64(s.Unfinished) > s.Calls || s.Called > s.Funcs || s.Duration < 0 || s.Duration > tracefile.MaxNanos) {
			t.Fatalf("summary out of bounds: %+v", s)
		}
		// Each event consumes input, except the synthetic exits at the
		// end, one per open call: so the count is bounded by the input
		// (readAll fails past it).
		limit := 2*len(data) + 16
		want := readAll(t, data, plain, limit)
		// Reading ahead gives what reading does, Calls taken or not.
		for _, how := range []how{ahead, calls} {
			if got := readAll(t, data, how, limit); !reflect.DeepEqual(got, want) {
				t.Fatalf("reading ahead (%v) differs:\n%s", how, firstDiff(got, want))
			}
		}
	})
}
