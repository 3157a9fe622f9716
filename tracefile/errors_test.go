package tracefile_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

// errorTrace writes a trace whose calls return errors: main.A returns
// error 1, main.B error 2 inside it, then main.A again without one. With
// bad set, its events are damaged as bad says.
func errorTrace(t *testing.T, bad string) []byte {
	t.Helper()
	var buf bytes.Buffer
	e, err := tracewrite.NewEncoder(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.A"}, {Name: "main.B"}})
	e.Errors(1, []tracefile.Error{{Type: "*fs.PathError", Message: "open x: no such file or directory"}, {Type: "*errors.errorString", Message: "EOF"}})
	var b tracewrite.Batch
	switch bad {
	case "unknown id":
		b.Enter(1, 1, 10)
		b.Error(1, 3, 20)
	case "no call":
		b.Error(1, 1, 20)
	default:
		b.Enter(1, 1, 10)
		b.Enter(1, 2, 11)
		b.Error(1, 2, 15)
		b.Exit(1, tracefile.Return, 15)
		b.Error(1, 1, 20)
		b.Exit(1, tracefile.Return, 20)
		b.Enter(1, 1, 30)
		b.Exit(1, tracefile.Return, 40)
	}
	e.Events(&b)
	e.End("main returned", time.Unix(0, 0))
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestErrors checks that each exit carries the error its call returned,
// and only its own.
func TestErrors(t *testing.T) {
	r, err := tracefile.NewReader(bytes.NewReader(errorTrace(t, "")))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if ev.Kind == tracefile.ExitEvent {
			x := r.Error(ev.Err)
			got = append(got, r.Func(ev.Func).Name+" "+x.Type+" "+x.Message)
		}
	}
	want := []string{"main.B *errors.errorString EOF", "main.A *fs.PathError open x: no such file or directory", "main.A  "}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("exits:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r.Calls() != 3 {
		t.Errorf("%d calls, want 3", r.Calls())
	}
}

// TestErrorsDamaged checks that an error naming no entry of the table, or
// no call, is damage.
func TestErrorsDamaged(t *testing.T) {
	for _, bad := range []string{"unknown id", "no call"} {
		r, err := tracefile.NewReader(bytes.NewReader(errorTrace(t, bad)))
		if err != nil {
			t.Fatal(err)
		}
		for err == nil {
			_, err = r.Next()
		}
		if !errors.Is(err, tracefile.ErrCorrupt) {
			t.Errorf("%s: %v, want corrupt", bad, err)
		}
	}
}

// TestScanEventsSkipsErrors checks that ScanEvents passes over errors.
func TestScanEventsSkipsErrors(t *testing.T) {
	var b tracewrite.Batch
	b.Enter(1, 1, 10)
	b.Error(1, 5, 20)
	b.Exit(1, tracefile.Return, 20)
	var buf bytes.Buffer
	e := tracewrite.NewChunkEncoder(&buf)
	e.Events(&b)
	e.Flush()
	var kinds []tracefile.EventKind
	if err := tracewrite.ScanEvents(buf.Bytes(), func(ev tracewrite.ScanEvent) { kinds = append(kinds, ev.Kind) }); err != nil || len(kinds) != 2 || kinds[0] != tracefile.EnterEvent || kinds[1] != tracefile.ExitEvent {
		t.Errorf("ScanEvents: %v, %v", kinds, err)
	}
}

// TestScanEventsHeld checks that ScanEvents gives a wait for the writer
// as one event, from its start to its end, between the events around it.
func TestScanEventsHeld(t *testing.T) {
	var b tracewrite.Batch
	b.Enter(1, 1, 10)
	b.Enter(1, 2, 30)
	b.Held(1, 15, 30) // the enter of 2 waited
	b.Exit(1, tracefile.Return, 40)
	b.Exit(1, tracefile.Return, 50)
	var buf bytes.Buffer
	e := tracewrite.NewChunkEncoder(&buf)
	e.Events(&b)
	e.Flush()
	var got []tracewrite.ScanEvent
	if err := tracewrite.ScanEvents(buf.Bytes(), func(ev tracewrite.ScanEvent) { got = append(got, ev) }); err != nil || len(got) != 5 {
		t.Fatalf("ScanEvents: %+v, %v", got, err)
	}
	if h := got[2]; h.Kind != tracefile.HeldEvent || h.From != 15 || h.Ticks != 30 || h.G != 1 || got[3].Kind != tracefile.ExitEvent || got[3].Ticks != 40 {
		t.Errorf("ScanEvents: %+v", got)
	}
}

// TestErrorMessages: an error's message comes back as the program wrote
// it, and is shown quoted once: a newline and a backslash followed by n
// stay two different messages. Its type, which is a name, is made
// printable.
func TestErrorMessages(t *testing.T) {
	msgs := []string{"line1\nline2", `line1\nline2`, "tab\there", "esc\x1b[0m nul\x00", "bad \xff utf-8"}
	var buf bytes.Buffer
	e, err := tracewrite.NewEncoder(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.Clock(0, 0)
	var errs []tracefile.Error
	for _, m := range msgs {
		errs = append(errs, tracefile.Error{Type: "*main.E\x1b", Message: m})
	}
	e.Errors(1, errs)
	e.End("main returned", time.Unix(0, 0))
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := tracefile.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for ev := (tracefile.Event{}); r.Read(&ev) == nil; {
	}
	shown := map[string]bool{}
	for i, m := range msgs {
		got := r.Error(uint32(i + 1))
		if got.Message != m || got.Type != `*main.E\x1b` {
			t.Errorf("error %d: %+q, want message %q and type made printable", i+1, got, m)
		}
		s := got.String()
		if want := `*main.E\x1b ` + strconv.Quote(m); s != want || shown[s] {
			t.Errorf("error %d shown as %s, want %s, once", i+1, s, want)
		}
		shown[s] = true
	}
}

// TestScanEventsAsWritten checks that ScanEvents gives back random
// enters, exits and errors of several goroutines as they were written,
// with function ids and time deltas of every width.
func TestScanEventsAsWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 3))
	var b tracewrite.Batch
	var want []tracewrite.ScanEvent
	depth := map[uint64]int{}
	tick := int64(0)
	for range 20000 {
		g := uint64(1 + rng.IntN(4))
		if rng.IntN(10) == 0 {
			g = 1 + rng.Uint64N(1<<40)
		}
		tick += rng.Int64N(1 << (1 + rng.IntN(30)))
		if depth[g] == 0 || rng.IntN(2) == 0 {
			fn := uint32(1 + rng.IntN(1<<(1+rng.IntN(20))))
			b.Enter(g, fn, tick)
			depth[g]++
			want = append(want, tracewrite.ScanEvent{G: g, Kind: tracefile.EnterEvent, Func: fn, Ticks: tick})
			continue
		}
		var errID uint32
		if rng.IntN(5) == 0 {
			errID = uint32(1 + rng.IntN(1000))
			b.Error(g, errID, tick)
		}
		kind := tracefile.ExitKind(rng.IntN(3))
		b.Exit(g, kind, tick)
		depth[g]--
		want = append(want, tracewrite.ScanEvent{G: g, Kind: tracefile.ExitEvent, Exit: kind, Err: errID, Ticks: tick})
	}
	var buf bytes.Buffer
	e := tracewrite.NewChunkEncoder(&buf)
	e.Events(&b)
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	var got []tracewrite.ScanEvent
	if err := tracewrite.ScanEvents(buf.Bytes(), func(ev tracewrite.ScanEvent) { got = append(got, ev) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("event %d: %+v, want %+v", i, got[i], want[i])
			}
		}
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
}
