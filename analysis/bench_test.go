package analysis

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

// writeSynthetic writes a trace of n calls: 64 goroutines, each running
// chains four calls deep over 1,000 functions, 1µs per leaf call.
func writeSynthetic(tb testing.TB, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	e, err := tracewrite.NewEncoder(w, map[string]string{"program": "synthetic"})
	if err != nil {
		tb.Fatal(err)
	}
	funcs := make([]tracefile.Func, 1000)
	for i := range funcs {
		funcs[i] = tracefile.Func{Name: fmt.Sprintf("pkg.F%d", i), File: "f.go", Line: i + 1}
	}
	e.Clock(0, 0)
	e.Funcs(1, funcs)
	var b tracewrite.Batch
	t := int64(0)
	calls := 0
	for calls < n {
		g := uint64(calls/4%64 + 1)
		base := uint32(calls/4*7%250) * 4
		for d := uint32(0); d < 4; d++ {
			b.Enter(g, base+d+1, t)
			t += 10
		}
		for d := 0; d < 4; d++ {
			t += 1000
			b.Exit(g, tracefile.Return, t)
		}
		calls += 4
		if b.Len() > 1<<18 {
			e.Clock(t, t)
			e.Events(&b)
			e.Flush()
		}
	}
	e.Clock(t, t)
	e.Events(&b)
	e.End("main returned", time.Unix(0, 0))
	e.Flush()
	w.Flush()
	f.Close()
}

func benchAnalyze(b *testing.B, n int) {
	path := filepath.Join(b.TempDir(), "synthetic.trace")
	writeSynthetic(b, path, n)
	b.ResetTimer()
	var peak uint64
	for i := 0; i < b.N; i++ {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r, err := tracefile.NewReader(f)
		if err != nil {
			b.Fatal(err)
		}
		p := Analyze(r, Options{Slowest: 3})
		f.Close()
		if p.Err != nil || len(p.Funcs) != 1000 {
			b.Fatalf("%v, %d functions", p.Err, len(p.Funcs))
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapSys)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric(float64(peak)/(1<<20), "MiB-heap")
}

// BenchmarkAnalyze1M is a report, chains or flame on a million calls.
func BenchmarkAnalyze1M(b *testing.B) { benchAnalyze(b, 1_000_000) }

// BenchmarkAnalyze100M is a hundred million calls.
func BenchmarkAnalyze100M(b *testing.B) { benchAnalyze(b, 100_000_000) }

// BenchmarkAnalyzeDeep has chains 50,000 calls deep: a mutual recursion
// calling a leaf at each level, and a chain of as many functions, each
// called once. A chain whose callers are walked, or whose functions are
// copied, for every new node costs the square of its depth.
func BenchmarkAnalyzeDeep(b *testing.B) {
	const depth = 50_000
	b.Run("mutual", func(b *testing.B) {
		benchDeep(b, 4, depth, func(w *tracewrite.Batch, i int, t func() int64) {
			w.Enter(1, uint32(2+i%2), t())
			w.Enter(1, 4, t())
			w.Exit(1, tracefile.Return, t())
		})
	})
	b.Run("distinct", func(b *testing.B) {
		benchDeep(b, depth+1, depth, func(w *tracewrite.Batch, i int, t func() int64) {
			w.Enter(1, uint32(2+i), t())
		})
	})
}

// benchDeep analyses main calling level(i) for each of depth levels, in
// a trace of funcs functions, then returning from all.
func benchDeep(b *testing.B, funcs, depth int, level func(w *tracewrite.Batch, i int, t func() int64)) {
	var buf bytes.Buffer
	e, _ := tracewrite.NewEncoder(&buf, nil)
	e.Clock(0, 0)
	fs := make([]tracefile.Func, funcs)
	for i := range fs {
		fs[i].Name = fmt.Sprintf("main.f%d", i)
	}
	e.Funcs(1, fs)
	var w tracewrite.Batch
	t := int64(0)
	tick := func() int64 { t += 10; return t }
	w.Enter(1, 1, tick())
	for i := 0; i < depth; i++ {
		level(&w, i, tick)
	}
	for i := 0; i <= depth; i++ { // every open call returns
		w.Exit(1, tracefile.Return, tick())
	}
	e.Clock(t+1, t+1)
	e.Events(&w)
	e.Flush()
	data := buf.Bytes()
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		r, err := tracefile.NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		p := Analyze(r, Options{})
		if p.Err != nil {
			b.Fatal(p.Err)
		}
		n = int(r.Calls())
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}
