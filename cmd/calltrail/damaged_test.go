package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

// damaged writes a trace of goroutines 1 and 2 calling main.f and main.g,
// its clock set by clocks (pairs of ticks and nanoseconds) and its events
// at the given ticks, with extra chunks written by more.
func damaged(t *testing.T, clocks [][2]int64, ticks []int64, more func(e *tracewrite.Encoder)) string {
	t.Helper()
	var buf bytes.Buffer
	e, err := tracewrite.NewEncoder(&buf, map[string]string{"program": "damaged"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clocks {
		e.Clock(c[0], c[1])
	}
	e.Funcs(1, []tracefile.Func{{Name: "main.f"}, {Name: "main.g"}})
	var b tracewrite.Batch
	for i, tk := range ticks {
		g := uint64(i%2 + 1)
		if i%4 < 2 {
			b.Goroutine(tracefile.Goroutine{ID: g, Parent: 1}, tk)
			b.Enter(g, uint32(g), tk)
		} else {
			b.Exit(g, tracefile.Return, tk)
		}
	}
	e.Events(&b)
	if more != nil {
		more(e)
	}
	e.End("main returned", time.Unix(0, 0))
	e.Flush()
	path := filepath.Join(t.TempDir(), "damaged.out")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDamagedTraces takes traces whose chunks are well formed, checksums
// and all, but whose contents are extreme, through every view: each once
// crashed a verb or exhausted memory.
func TestDamagedTraces(t *testing.T) {
	bomb := func(e *tracewrite.Encoder) {
		// 256 gzip members of 1 MB each, one stream to a reader: made
		// in a moment, where compressing 256 MB took half a minute
		// under the race detector.
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		zw.Write(make([]byte, 1<<20))
		zw.Close()
		e.Profile("cpu", bytes.Repeat(z.Bytes(), 256))
	}
	for _, tc := range []struct {
		name   string
		clocks [][2]int64
		ticks  []int64
		more   func(*tracewrite.Encoder)
		refuse string // the error a verb gives, if the trace is refused
	}{
		// Times converted through a rate of 2^62 ns a tick land past
		// int64: the text view's rounding recursed for ever.
		{"times past int64", [][2]int64{{0, 0}, {1, 1 << 62}}, []int64{0, 1, 5, 9}, nil, "event time beyond"},
		// Events before the first clock point: negative times put a
		// goroutine before the first slice of the goroutines chart.
		{"times before the start", [][2]int64{{1000, 0}, {2000, 1000}}, []int64{0, 10, 20, 3000}, nil, ""},
		{"a clock that runs backwards", [][2]int64{{0, 0}, {10, 100}, {20, 50}}, []int64{30, 5, 40, 1}, nil, ""},
		// A profile that inflates from 256 KB to 256 MB.
		{"a gzip bomb", [][2]int64{{0, 0}}, []int64{0, 1, 2, 3}, bomb, ""},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			path := damaged(t, tc.clocks, tc.ticks, tc.more)
			info, _ := os.Stat(path)
			checkViews(t, path, int(info.Size()))
			code, _, stderr := runCmd("report", path)
			if tc.refuse != "" && (code != 1 || !strings.Contains(stderr, tc.refuse)) {
				t.Errorf("report: exit %d, %q; want exit 1 saying %q", code, stderr, tc.refuse)
			}
			if tc.refuse == "" && code != 0 {
				t.Errorf("report: exit %d, %q", code, stderr)
			}
		})
	}
}

// TestInfoScanDamage: info --scan stopped by damage in the middle of a
// trace says how the trace ended as its summary does, and that the scan
// stopped there; cut at the same place, it has no end record.
func TestInfoScanDamage(t *testing.T) {
	// Chunks of events, counted as the runtime's writer counts them
	// for the summary that ends the trace.
	var buf bytes.Buffer
	e, err := tracewrite.NewEncoder(&buf, map[string]string{"program": "damaged"})
	if err != nil {
		t.Fatal(err)
	}
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.f"}})
	var tot tracewrite.Totals
	for c := range 4 {
		var b tracewrite.Batch
		if c == 0 {
			b.Goroutine(tracefile.Goroutine{ID: 1}, 1)
		}
		for i := int64(0); i < 2000; i += 2 {
			b.Enter(1, 1, 10+i+int64(c)*2000)
			b.Exit(1, tracefile.Return, 11+i+int64(c)*2000)
		}
		e.Flush()
		n := buf.Len()
		e.Events(&b)
		e.Flush()
		if err := tracewrite.ScanEvents(buf.Bytes()[n:], tot.Count); err != nil {
			t.Fatal(err)
		}
		tot.Fold()
	}
	e.End("main returned", time.Unix(0, 0))
	e.Summary(&tot)
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "damaged.out")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mid := len(data) / 2
	data[mid] ^= 0xff
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd("info", "--scan", path)
	if want := "ended       main returned, as the summary the trace ends with says (the scan stopped at the damage)"; code != 1 || !strings.Contains(stdout, want) || !strings.Contains(stderr, "corrupt") {
		t.Errorf("info --scan of a damaged trace: exit %d\n%s%s\nwant exit 1 and %q", code, stdout, stderr, want)
	}
	cut := path + ".cut"
	if err := os.WriteFile(cut, data[:mid], 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCmd("info", "--scan", cut)
	if want := "ended       no end record: the program was killed, is still running, or called os.Exit without calltrail's exit hook (calltrail build, run and test link it)"; code != 1 || !strings.Contains(stdout, want) {
		t.Errorf("info --scan of a cut trace: exit %d\n%s%s\nwant exit 1 and %q", code, stdout, stderr, want)
	}
}

// TestCutInFunctionTable: a verb that finds nothing in a trace cut short
// in its function table says the trace is cut, not only that it has no
// such function.
func TestCutInFunctionTable(t *testing.T) {
	data, err := tracetest.Build("1 +main.main 0\n1 +main.work 10\n1 - 90\n1 - 100\n")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("main.work"))
	if i < 0 {
		t.Fatal("no function table")
	}
	path := filepath.Join(t.TempDir(), "cut.trace")
	if err := os.WriteFile(path, data[:i+4], 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd("chains", "main.work", path)
	if code != 1 || !strings.Contains(stderr, "no function") || !strings.Contains(stderr, "truncated") {
		t.Errorf("chains of a trace cut in its function table: exit %d, %q", code, stderr)
	}
}
