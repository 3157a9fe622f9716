package web

import (
	"os"
	"runtime"
	"testing"
)

// benchTrace is the trace the benchmarks read: CALLTRAIL_BENCH_TRACE, to
// measure a real one (a ten-million-call trace of examples/fib 33, say),
// or a synthetic one of a million calls.
func benchTrace(b *testing.B) string {
	if p := os.Getenv("CALLTRAIL_BENCH_TRACE"); p != "" {
		return p
	}
	return writeTrace(b, 500_000)
}

// BenchmarkLoad measures the time from file to ready: read, analysis
// and timeline index. It reports the heap the trace keeps.
func BenchmarkLoad(b *testing.B) {
	path := benchTrace(b)
	var t *Trace
	for range b.N {
		var err error
		if t, err = Load(path); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "MiB-heap")
	b.ReportMetric(float64(t.Calls()), "calls")
}

// BenchmarkTimeline measures window queries of the widest lane on 1280
// pixels: the whole trace, then zoomed in 10, 1000 and 100000 times in its
// middle, as pan and zoom ask.
func BenchmarkTimeline(b *testing.B) {
	t, err := Load(benchTrace(b))
	if err != nil {
		b.Fatal(err)
	}
	l := t.ix.lanes[0]
	for _, c := range t.ix.lanes {
		if c.len() > l.len() {
			l = c
		}
	}
	end := int64(t.Profile.Duration)
	for _, zoom := range []struct {
		name string
		f    int64
	}{{"all", 1}, {"x10", 10}, {"x1000", 1000}, {"x100000", 100000}} {
		b.Run(zoom.name, func(b *testing.B) {
			span := end / zoom.f
			from := end/2 - span/2
			var items []item
			b.ResetTimer()
			for range b.N {
				items = l.window(from, from+span, max(span/1280, 1), maxRows, items[:0])
			}
			b.ReportMetric(float64(len(items)), "bars")
		})
	}
}

// BenchmarkFunction measures the function view of the most called
// function: its histogram scans every call.
func BenchmarkFunction(b *testing.B) {
	t, err := Load(benchTrace(b))
	if err != nil {
		b.Fatal(err)
	}
	s := New(t, nil, nil)
	name := t.Functions("calls", 1)[0].Name
	b.ResetTimer()
	for range b.N {
		if _, err := s.function(nil, nil, &params{q: map[string][]string{"name": {name}}}); err != nil {
			b.Fatal(err)
		}
	}
}
