package replay

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/gtable"
	"github.com/calltrail/calltrail/internal/indented"
	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/tracefile"
)

var update = flag.Bool("update", false, "rewrite golden files")

// script is main.main calling main.A twice, the second time through
// main.B, which panics; and goroutine 2, started by main.main, running
// main.worker, which calls main.B and is cut short by the trace's end.
const script = `
1 +main.main 0
1 +main.A 100
1 - 1100
2 go 1 main.main 1150
2 +main.worker 1200
2 +main.B 1300
1 +main.A 2000
1 +main.B 2100
1 ! 52100
1 ! 52200
2 - 60000
1 - 90000
`

func TestWrite(t *testing.T) {
	data, err := tracetest.Build(script)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    filter.Filter
		o    Options
	}{
		{"all", filter.Filter{}, Options{}},
		{"parents", filter.Filter{}, Options{Parents: true}},
		// Said only of the goroutines whose calls are shown.
		{"parents-focus", filter.Filter{Focus: regexp.MustCompile(`main\.worker`)}, Options{Parents: true}},
		{"goroutine", filter.Filter{G: 2}, Options{}},
		{"focus", filter.Filter{Focus: regexp.MustCompile(`main\.B`)}, Options{}},
		{"hide", filter.Filter{Hide: regexp.MustCompile(`main\.A`)}, Options{}},
		{"depth", filter.Filter{MaxDepth: 2}, Options{}},
		{"long", filter.Filter{MinTime: 10 * time.Microsecond}, Options{}},
		{"window", filter.Filter{From: 1500, To: 2500}, Options{}},
	} {
		r, err := tracefile.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Write(&out, r, &tc.f, tc.o); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		tracetest.Golden(t, tc.name+".golden", out.String(), *update)
	}
}

// TestSnapshot: in a flight recorder's snapshot, the exit of a call open
// when the window began gives its time from the window's start, and
// says how long before it the call began.
func TestSnapshot(t *testing.T) {
	r := tracetest.Read(t, `
meta mode flight
meta window_start_ns 1000
meta window_end_ns 5000
1 +main.main 0
1 +main.serve 100
1 +main.work 1500
1 - 2500
1 - 4000
`)
	var out bytes.Buffer
	if err := Write(&out, r, &filter.Filter{}, Options{}); err != nil {
		t.Fatal(err)
	}
	tracetest.Golden(t, "snapshot.golden", out.String(), *update)
}

// TestDeep checks that a deep recursion's lines stay short: indented at
// most indented.MaxIndent tabs, with the depth beyond written out.
func TestDeep(t *testing.T) {
	const depth = 1000
	r, err := tracefile.NewReader(bytes.NewReader(tracetest.Recursion(depth)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, r, &filter.Filter{}, Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2*(depth+2) {
		t.Fatalf("%d lines for %d calls", len(lines), depth+2)
	}
	for _, l := range lines {
		if n := strings.Count(l, "\t"); n > indented.MaxIndent {
			t.Fatalf("line indented %d tabs: %.80q", n, l)
		}
	}
	if want := "\t[1002]->main.leaf"; !strings.Contains(out.String(), want) {
		t.Errorf("the innermost call's line does not end in %q", want)
	}
}

// TestCallsGrowInPlace: a goroutine's calls cost their 16 bytes each
// however many there are: storing them allocates no copy of what is
// stored but the first block, as a slice doubling its array would (twice
// the bytes in all, and three times at the moment it grows).
func TestCallsGrowInPlace(t *testing.T) {
	const n = 1 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var cs calls
	for i := range n {
		cs.add(call{dur: int64(i), fn: shownBit, depth: 1}, nil)
	}
	runtime.ReadMemStats(&after)
	if cs.n != n || cs.at(n-1).dur != n-1 || cs.at(12345).dur != 12345 {
		t.Fatalf("%d calls stored, the last %+v", cs.n, *cs.at(n - 1))
	}
	per := float64(after.TotalAlloc-before.TotalAlloc) / n
	if per > 16*1.1 {
		t.Errorf("storing %d calls allocated %.1f bytes a call, want at most 17.6", n, per)
	}
}

// TestPieces prints traces in pieces of every size, down to a call
// each, and whole: the output is the same, though the pieces begin deep
// in calls, hold many goroutines or part of one, and are printed in any
// order. Random traces, the deep recursion, and a trace of goroutines
// with calls still open at its end.
func TestPieces(t *testing.T) {
	traces := [][]byte{tracetest.Recursion(300)}
	for seed := range uint64(12) {
		data, _, err := tracetest.Random(seed)
		if err != nil {
			t.Fatal(err)
		}
		traces = append(traces, data)
	}
	scripted, err := tracetest.Build(script)
	if err != nil {
		t.Fatal(err)
	}
	traces = append(traces, scripted)
	// Two goroutines of many calls one after the other, each calling
	// some more: idle between them, their last blocks go to the file
	// and come back for the next call.
	var idle strings.Builder
	at := 0
	event := func(format string, args ...any) {
		at += 100
		fmt.Fprintf(&idle, format+" %d\n", append(args, at)...)
	}
	event("1 +main.main")
	event("2 go 1 main.main")
	event("3 go 1 main.main")
	for i := range 60 {
		for g := 2; g <= 3; g++ {
			event("%d +main.serve", g)
			for j := range i % 5 {
				event("%d +main.step%d", g, j)
				event("%d -", g)
			}
			event("%d -", g)
		}
	}
	event("1 -")
	idled, err := tracetest.Build(idle.String())
	if err != nil {
		t.Fatal(err)
	}
	traces = append(traces, idled)
	print := func(data []byte, f filter.Filter, o Options) string {
		t.Helper()
		r, err := tracefile.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Write(&out, r, &f, o); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		return out.String()
	}
	defer func(n int) { pieceCalls = n }(pieceCalls)
	lines := 0
	for i, data := range traces {
		for _, tc := range []struct {
			f filter.Filter
			o Options
		}{{}, {o: Options{Parents: true}}, {f: filter.Filter{MaxDepth: 3}}} {
			pieceCalls = 1 << 30
			whole := print(data, tc.f, tc.o)
			lines += strings.Count(whole, "\n")
			for _, n := range []int{1, 2, 3, 7, 64} {
				pieceCalls = n
				if got := print(data, tc.f, tc.o); got != whole {
					t.Fatalf("trace %d, %+v, in pieces of %d calls: the output differs from the whole:\n%s\nwant:\n%s", i, tc, n, got, whole)
				}
			}
			// Blocks of calls kept in a file, full or not, from the
			// first on or past a few calls, brought back for more
			// calls, and printed in pieces that begin in them or in
			// blocks before them.
			for _, sz := range []struct{ bits, calls int }{{2, 0}, {3, 5}, {5, 40}} {
				func() {
					defer func(bits, calls int) { blockBits, spillCalls = bits, calls }(blockBits, spillCalls)
					blockBits, spillCalls = sz.bits, sz.calls
					for _, n := range []int{1, 7, 1 << 30} {
						pieceCalls = n
						if got := print(data, tc.f, tc.o); got != whole {
							t.Fatalf("trace %d, %+v, blocks of %d calls, %d in memory, in pieces of %d calls: the output differs from the whole:\n%s\nwant:\n%s", i, tc, 1<<sz.bits, sz.calls, n, got, whole)
						}
					}
				}()
			}
		}
	}
	if lines < 2000 {
		t.Errorf("%d lines in all: the traces are too small to tell", lines)
	}
	if n := spilled.Load(); n < 1000 {
		t.Errorf("%d blocks of calls were kept in a file: too few to tell", n)
	}
}

// errAfter fails writes once n bytes are written.
type errAfter struct{ n int }

var errFull = errors.New("no room")

func (w *errAfter) Write(p []byte) (int, error) {
	if w.n < len(p) {
		return 0, errFull
	}
	w.n -= len(p)
	return len(p), nil
}

// TestWriteFails: Write returns the error writing, and stops printing.
func TestWriteFails(t *testing.T) {
	r, err := tracefile.NewReader(bytes.NewReader(tracetest.Recursion(100000)))
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(&errAfter{n: 1000}, r, &filter.Filter{}, Options{}); !errors.Is(err, errFull) {
		t.Errorf("Write returned %v, want %v", err, errFull)
	}
}

// shortWriter writes half of what it is given, and says nothing of it.
type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return len(p) / 2, nil }

// TestShortWrite: a writer that writes less than it is given, with no
// error, is an error.
func TestShortWrite(t *testing.T) {
	r, err := tracefile.NewReader(bytes.NewReader(tracetest.Recursion(100)))
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(shortWriter{}, r, &filter.Filter{}, Options{}); !errors.Is(err, io.ErrShortWrite) {
		t.Errorf("Write returned %v, want %v", err, io.ErrShortWrite)
	}
}

// TestManyEmptyGoroutines: goroutines of no call shown (a filter left
// theirs out) fill pieces as calls do, rather than pile up in one.
func TestManyEmptyGoroutines(t *testing.T) {
	const n = 200_000
	var gs gtable.Table[goroutine]
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i + 1)
		gs.Put(ids[i])
	}
	pr := &printer{names: []string{""}, blocks: make(chan []byte, 256)}
	defer func(n int) { pieceCalls = n }(pieceCalls)
	pieceCalls = 64
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := printAll(io.Discard, pr, &gs, ids, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// Each segment takes 80 bytes: in one piece, 16 MB; in pieces of
	// 64, some kilobytes a piece.
	if got := after.TotalAlloc - before.TotalAlloc; got > 2<<20 {
		t.Errorf("printing %d goroutines of no call allocated %d bytes", n, got)
	}
}
