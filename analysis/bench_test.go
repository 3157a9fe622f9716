package analysis

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

func benchAnalyze(b *testing.B, n int) {
	path := filepath.Join(b.TempDir(), "synthetic.trace")
	if err := tracetest.WriteSynthetic(path, n); err != nil {
		b.Fatal(err)
	}
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
