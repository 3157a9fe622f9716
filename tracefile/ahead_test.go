package tracefile_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/tracefile"
)

// TestReadAhead reads traces of every shape twice, once reading ahead:
// the events, the error that ends them and what the reader tells after
// are the same, and so are the names and goroutines asked for while
// reading, as an analysis asks for them.
func TestReadAhead(t *testing.T) {
	traces := map[string][]byte{"sample": sample(t), "values": valueTrace("a string of values"), "coverage": coverageTrace(t, sampleCoverage), "summarized": summarized(t, "main returned")}
	for _, name := range []string{"sample.trace", "sample-before-waits.trace"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		traces[name] = data
	}
	// Several batches: a synthetic trace of 60,000 calls.
	data, err := os.ReadFile(synthetic(t, 60_000))
	if err != nil {
		t.Fatal(err)
	}
	traces["synthetic"] = data
	// The latest event mid-chunk, those after it earlier (another core's
	// clock behind): the trace's end is the latest, whoever decodes it.
	data, err = tracetest.Build("1 +main.a 100\n1 - 5000\n2 +main.b 200\n2 +main.c 300\n2 - 400\n2 - 500\n")
	if err != nil {
		t.Fatal(err)
	}
	traces["back in time"] = data
	// Recursion, errors, panics, waits for the writer, clocks that step
	// back; and what a damaged or hostile writer makes, spans included.
	for seed := range uint64(50) {
		data, _, err := tracetest.Random(seed)
		if err != nil {
			t.Fatal(err)
		}
		traces[fmt.Sprintf("random%d", seed)] = data
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 30 {
		in := make([]byte, r.IntN(2048))
		for j := range in {
			in[j] = byte(r.Uint32())
		}
		traces[fmt.Sprintf("generated%d", i)] = tracetest.Generate(in)
	}
	for name, data := range traces {
		// Whole, and cut short: the error comes after the events.
		for _, data := range [][]byte{data, data[:len(data)*2/3]} {
			want := readAll(t, data, plain, 0)
			for _, how := range []how{ahead, calls} {
				if got := readAll(t, data, how, 0); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s (%d bytes): reading ahead (%v) differs:\n%s", name, len(data), how, firstDiff(got, want))
				}
			}
			// Summarize takes Calls where it can.
			if got, want := summarize(data, true), summarize(data, false); got != want {
				t.Fatalf("%s (%d bytes): summarized reading ahead:\n%s\nnot\n%s", name, len(data), got, want)
			}
		}
	}
}

// summarize returns Summarize's summary of data and its error, as text.
func summarize(data []byte, ahead bool) string {
	rd, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		return err.Error()
	}
	if ahead {
		rd.ReadAhead()
		defer rd.StopReadAhead()
	}
	s, err := tracefile.Summarize(rd)
	return fmt.Sprintf("%+v %v", s, err)
}

// read is what a reader gave: each event with the names and goroutine
// asked for at it, the error, and what the reader told after.
type read struct {
	Events []seen
	Err    string
	After  string
}

type seen struct {
	tracefile.Event
	Func      tracefile.Func
	Error     tracefile.Error
	Goroutine tracefile.Goroutine
	Known     bool
}

// how says how readAll reads.
type how int

const (
	plain how = iota // Read
	ahead            // ReadAhead, then Read
	calls            // ReadAhead, then ReadCall, and Read for what it leaves
)

func (h how) String() string { return [...]string{"Read", "Read", "ReadCall"}[h] }

// readAll reads data as how says, failing the test past limit events (0
// for none).
func readAll(t *testing.T, data []byte, how how, limit int) read {
	t.Helper()
	rd, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		return read{Err: err.Error()}
	}
	if how != plain {
		rd.ReadAhead()
		defer rd.StopReadAhead()
	}
	var out read
	var ev tracefile.Event
	for {
		var c tracefile.Call
		ok := false
		if how != ahead {
			c, ok = rd.ReadCall()
		}
		if ok {
			if how == plain {
				t.Fatalf("ReadCall read %+v, not reading ahead", c)
			}
			ev = tracefile.Event{Kind: c.Kind(), G: c.G, Func: c.Func(), Time: c.Time, Depth: c.Depth(), Exit: c.Exit(), Start: c.Start}
		} else if err := rd.Read(&ev); err != nil {
			out.Err = err.Error()
			break
		}
		s := seen{Event: ev, Func: rd.Func(ev.Func), Error: rd.Error(ev.Err)}
		s.Goroutine, s.Known = rd.Goroutine(ev.G)
		if ev.Span.IsValid() {
			sp, ok := rd.Span(ev.Span)
			s.Error.Message = fmt.Sprintf("%+v %v %v", sp, ok, rd.HasSpans())
		}
		out.Events = append(out.Events, s)
		if limit > 0 && len(out.Events) > limit {
			t.Fatalf("%d events from %d bytes", len(out.Events), len(data))
		}
	}
	// Reading on after the end gives the same error.
	if err := rd.Read(&ev); err == nil || err.Error() != out.Err || ev != (tracefile.Event{}) {
		t.Fatalf("Read after %q: %v, %+v", out.Err, err, ev)
	}
	end, ended := rd.End()
	out.After = fmt.Sprintf("%+v calls %d max %d end %q %v funcs %d errors %d profiles %d coverage %d narrowed %v",
		rd.Stats(), rd.Calls(), rd.MaxTime(), end, ended, rd.NumFuncs(), rd.NumErrors(), len(rd.Profiles()), len(rd.Coverage()), rd.Narrowed())
	return out
}

func firstDiff(got, want read) string {
	for i := range min(len(got.Events), len(want.Events)) {
		if !reflect.DeepEqual(got.Events[i], want.Events[i]) {
			return fmt.Sprintf("event %d: got %+v\nwant %+v", i, got.Events[i], want.Events[i])
		}
	}
	return fmt.Sprintf("got %d events, %q, %s\nwant %d events, %q, %s", len(got.Events), got.Err, got.After, len(want.Events), want.Err, want.After)
}

// TestStopReadAhead stops a reader midway: its goroutine ends, and Read
// says it was stopped rather than block.
func TestStopReadAhead(t *testing.T) {
	f, err := tracefile.Open(synthetic(t, 100_000))
	if err != nil {
		t.Fatal(err)
	}
	f.ReadAhead()
	var ev tracefile.Event
	for range 10 {
		if err := f.Read(&ev); err != nil {
			t.Fatal(err)
		}
	}
	f.Close() // stops the reader's goroutine first
	// What the reader tells may be read now: the race detector sees
	// that the goroutine is done with it.
	_, _ = f.End()
	_, _, _ = f.Stats(), f.Calls(), f.MaxTime()
	n := 0
	for {
		err := f.Read(&ev)
		if err != nil {
			if errors.Is(err, tracefile.ErrCorrupt) || n > 100_000 {
				t.Fatalf("after %d more events: %v", n, err)
			}
			break
		}
		n++
	}
}

// synthetic writes a synthetic trace of n calls and returns its path.
func synthetic(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "synthetic.trace")
	if err := tracetest.WriteSynthetic(path, n); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBatchesGrow reads a large trace ahead: its batches start small,
// for a trace of a few events, and grow to their full size, which
// batches used again keep: small ones used again for good took a large
// trace half as long again.
func TestBatchesGrow(t *testing.T) {
	f, err := tracefile.Open(synthetic(t, 400_000))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := f.Reader
	rd.ReadAhead()
	var sizes []int // of the batches read, as they change
	var ev tracefile.Event
	for {
		if err := rd.Read(&ev); err != nil {
			break
		}
		if n := tracefile.BatchWords(rd); n != 0 && (len(sizes) == 0 || n != sizes[len(sizes)-1]) {
			sizes = append(sizes, n)
		}
	}
	if len(sizes) < 2 || sizes[0] >= sizes[len(sizes)-1] || sizes[len(sizes)-1] != 1<<16 {
		t.Fatalf("batches of %v words: want them growing to 65536", sizes)
	}
	for i := 1; i < len(sizes); i++ {
		if sizes[i] < sizes[i-1] {
			t.Fatalf("batches of %v words: a smaller one after a larger", sizes)
		}
	}
}
