package calltrail

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/clock"
	"github.com/calltrail/calltrail/tracefile"
)

// The functions below are what benchmarks call: plain is untraced, guarded
// carries exactly the guard the instrumenter inserts. Built without the
// calltrail tag, guarded compiles to plain's machine code (see
// TestCompiledOut); with it, it is traced.

var benchFuncs = [...]Func{{Name: "calltrail.guarded", File: "bench_test.go", Line: 1}, {Name: "calltrail.descend", File: "bench_test.go", Line: 2}, {Name: "calltrail.guardedErr", File: "bench_test.go", Line: 3}, {Name: "calltrail.guardedArgs", File: "bench_test.go", Line: 4}}

// The functions write nothing shared, so that parallel benchmarks measure
// the tracing rather than contention on a result.

// guardedErr is guarded with an error result, guarded as the instrumenter
// guards such functions, returning nil.
func guardedErr(x int) (_ int, ctErr error) {
	if Enabled {
		if c := Enter(&benchFuncs[2]); c != 0 {
			defer ExitErr(c, &ctErr)
		}
	}
	return x*3 + 1, nil
}

// guardedArgs is guardedErr traced with --args: its two arguments and
// its result recorded.
func guardedArgs(x int, s string) (r int, ctErr error) {
	if Enabled {
		if c := Enter(&benchFuncs[3]); c != 0 {
			Arg(c, x)
			Arg(c, s)
			defer func() { Result(c, r); ExitErr(c, &ctErr) }()
		}
	}
	return x*3 + len(s), nil
}

//go:noinline
func plain(x int) int {
	return x*3 + 1
}

//go:noinline
func guarded(x int) int {
	if Enabled {
		if c := Enter(&benchFuncs[0]); c != 0 {
			defer Exit(c)
		}
	}
	return x*3 + 1
}

// descend recurses d frames deep and panics at the bottom.
//
//go:noinline
func descend(d int) int {
	if Enabled {
		if c := Enter(&benchFuncs[1]); c != 0 {
			defer Exit(c)
		}
	}
	if d == 0 {
		panic("bottom")
	}
	return descend(d-1) + 1
}

//go:noinline
func manual(x int) int {
	defer Trace()()
	return x*3 + 1
}

// benchTrace starts a fresh tracer for a benchmark and returns a function
// that stops it and reports dropped calls and bytes per call.
func benchTrace(b *testing.B) func() {
	b.Helper()
	if !Enabled {
		return func() {}
	}
	path := filepath.Join(b.TempDir(), "bench.out")
	stop := useTracer(b, path, options{buffer: 64 << 20, every: 100e6})
	return func() {
		b.StopTimer()
		stop()
		s := summarize(b, path)
		total := s.Calls + s.Stats.DroppedCalls
		if total > 0 {
			b.ReportMetric(100*float64(s.Stats.DroppedCalls)/float64(total), "%dropped")
		}
		if s.Calls > 0 {
			b.ReportMetric(float64(s.Bytes)/float64(s.Calls), "B/call")
		}
	}
}

// hotPath replaces the tracer with one nobody drains: benchmarks release
// ring space themselves every 4096 calls (see release), so they measure
// recording into the buffer alone, without the writer taking one of the
// machine's two cores.
func hotPath(b *testing.B) func() {
	b.Helper()
	if !Enabled {
		return func() {}
	}
	setup()
	old, wasRecording := tr, recording.Load()
	t := makeTracer(16, 1<<16, fullWait)
	benchFuncs[0].id.Store(0)
	use(t)
	recording.Store(true)
	return func() {
		b.StopTimer()
		var dropped uint64
		for i := range t.rings {
			dropped += t.rings[i].Dropped.Load()
		}
		b.ReportMetric(100*float64(dropped)/float64(b.N), "%dropped")
		use(old)
		recording.Store(wasRecording)
		benchFuncs[0].id.Store(0)
	}
}

// release gives the rings back, as if a writer had read them.
func release() {
	if Enabled {
		for i := range tr.rings {
			tr.rings[i].Skip()
		}
	}
}

// BenchmarkFloor is two raw reads of the clock the hot path uses (the
// cycle counter where calltrail uses it): what exact timing of a call's
// enter and exit costs at the least on this host, the floor the hot path
// is measured against.
func BenchmarkFloor(b *testing.B) {
	setup()
	var s int64
	for i := 0; i < b.N; i++ {
		s += clockRead()
		s ^= clockRead()
	}
	result.Store(s)
}

// clockRead reads the clock as the hot path does, without the rest of
// gstate.State.
func clockRead() int64 { return clock.Read() }

// BenchmarkHotPathVsFloor measures, in one benchmark and so on one host
// at one time, the hot path (ns/op), an untraced call and the floor, and
// reports the hot path's overhead over the untraced call as a multiple of
// the floor (x-floor): the figure that compares across hosts, whose
// clocks differ twofold in cost.
func BenchmarkHotPathVsFloor(b *testing.B) {
	if !Enabled {
		b.Skip("the hot path needs the calltrail tag")
	}
	defer hotPath(b)()
	vsFloor(b, release)
}

// BenchmarkHotPathVsFloorWriter is BenchmarkHotPathVsFloor with the trace
// writer running, as in a traced program: on the other core it drains the
// rings, encodes the events, counts them for the trace's summary and
// writes them to a file that keeps nothing. Its B/op are the writer's
// buffers, not the calls'.
func BenchmarkHotPathVsFloorWriter(b *testing.B) {
	if !Enabled {
		b.Skip("the hot path needs the calltrail tag")
	}
	setup()
	defer useTracerOn(b, discard{}, options{})()
	vsFloor(b, func() {})
	b.StopTimer()
	st := tr.ringStats()
	b.ReportMetric(float64(st.HeldNs)/float64(b.N), "held-ns/op")
}

// vsFloor runs the floor, an untraced call and a traced call in turns,
// calling release every 4,096 calls to make room in the rings, and
// reports them.
func vsFloor(b *testing.B, release func()) {
	b.ReportAllocs()
	var floor, untraced, traced time.Duration
	// Rounds of each in turn, so that a change in the machine's load
	// touches all three alike.
	const round = 1 << 16
	for done := 0; done < b.N; done += round {
		t0 := time.Now()
		var s int64
		for i := 0; i < round; i++ {
			s += clockRead()
			s ^= clockRead()
		}
		t1 := time.Now()
		for i := 0; i < round; i++ {
			s += int64(plain(i))
			if i&4095 == 0 {
				release()
			}
		}
		t2 := time.Now()
		for i := 0; i < round; i++ {
			guarded(i)
			if i&4095 == 0 {
				release()
			}
		}
		t3 := time.Now()
		result.Store(s)
		floor, untraced, traced = floor+t1.Sub(t0), untraced+t2.Sub(t1), traced+t3.Sub(t2)
	}
	b.StopTimer()
	per := func(d time.Duration) float64 { return float64(d) / float64(b.N) }
	b.ReportMetric(per(traced), "ns/op")
	b.ReportMetric(per(floor), "floor-ns")
	b.ReportMetric(per(untraced), "untraced-ns")
	b.ReportMetric((per(traced)-per(untraced))/per(floor), "x-floor")
}

// BenchmarkHotPath is the generated fast path, recording into the buffer.
func BenchmarkHotPath(b *testing.B) {
	defer hotPath(b)()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		guarded(i)
		if i&4095 == 0 {
			release()
		}
	}
}

// BenchmarkHotPathErr is BenchmarkHotPath for a function whose error
// result the trace records, returning nil: to compare with HotPath in the
// same run, for what capturing the error costs.
func BenchmarkHotPathErr(b *testing.B) {
	defer hotPath(b)()
	benchFuncs[2].id.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		guardedErr(i)
		if i&4095 == 0 {
			release()
		}
	}
}

// BenchmarkHotPathArgs is BenchmarkHotPathErr recording two arguments,
// an int and a short string, and the int result: what --args costs.
func BenchmarkHotPathArgs(b *testing.B) {
	defer hotPath(b)()
	benchFuncs[3].id.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		guardedArgs(i, "key")
		if i&4095 == 0 {
			release()
		}
	}
}

// BenchmarkHotPathParallel is BenchmarkHotPath on every P at once; its
// ns/op is wall time per call over all goroutines.
func BenchmarkHotPathParallel(b *testing.B) {
	defer hotPath(b)()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			guarded(i)
			if i&4095 == 0 {
				release()
			}
			i++
		}
	})
}

// BenchmarkPanicDeep panics 10,000 frames deep and recovers at the top,
// as recursive parsers do. With the calltrail tag every frame is traced
// and its exit classified as left by the panic; without, the guards
// compile out: the two runs compare the panic's cost traced and not.
func BenchmarkPanicDeep(b *testing.B) {
	defer hotPath(b)()
	benchFuncs[1].id.Store(0)
	for i := 0; i < b.N; i++ {
		func() {
			defer func() { recover() }()
			descend(10_000)
		}()
		release()
	}
}

// BenchmarkHotPathOff is the fast path switched off at run time.
func BenchmarkHotPathOff(b *testing.B) {
	defer hotPath(b)()
	Pause()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		guarded(i)
		if i&4095 == 0 {
			release()
		}
	}
}

// BenchmarkHotPathTrace is the manual API, defer calltrail.Trace()().
func BenchmarkHotPathTrace(b *testing.B) {
	defer hotPath(b)()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		manual(i)
		if i&4095 == 0 {
			release()
		}
	}
}

// BenchmarkUntracedLoop is BenchmarkUntraced with the hot path
// benchmarks' loop, as the baseline for BenchmarkHotPathOff.
func BenchmarkUntracedLoop(b *testing.B) {
	s := 0
	for i := 0; i < b.N; i++ {
		s += plain(i)
		if i&4095 == 0 {
			release()
		}
	}
	result.Store(int64(s))
}

// result keeps the untraced benchmarks' calls from being dead code.
var result atomic.Int64

func BenchmarkUntraced(b *testing.B) {
	s := 0
	for i := 0; i < b.N; i++ {
		s += plain(i)
	}
	result.Store(int64(s))
}

func BenchmarkUntracedParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		i, s := 0, 0
		for pb.Next() {
			s += plain(i)
			i++
		}
		result.Add(int64(s))
	})
}

// BenchmarkGuarded is the firehose: the generated fast path called as fast
// as one core can, with the real writer encoding to a file on the other
// core. It reports the share of calls dropped and bytes per call on disk.
// Without the calltrail tag it measures the guard compiled out.
func BenchmarkGuarded(b *testing.B) {
	defer benchTrace(b)()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		guarded(i)
	}
}

// BenchmarkGuardedParallel runs the fast path on every P at once.
func BenchmarkGuardedParallel(b *testing.B) {
	defer benchTrace(b)()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			guarded(i)
			i++
		}
	})
}

// BenchmarkFirehoseWait is the firehose on every core: twice as many
// goroutines as Ps calling the fast path flat out, with the real writer,
// under the default policy, so that goroutines wait for the writer rather
// than lose calls. ns/op is wall time per call, as in
// BenchmarkHotPathParallel; held-ns/call is the time goroutines spent
// waiting, per call.
func BenchmarkFirehoseWait(b *testing.B) { benchFirehose(b, fullWait) }

// BenchmarkFirehoseDrop is BenchmarkFirehoseWait with CALLTRAIL_FULL=drop:
// the goroutines never wait, and calls the rings cannot take are lost.
func BenchmarkFirehoseDrop(b *testing.B) { benchFirehose(b, fullDrop) }

func benchFirehose(b *testing.B, policy fullPolicy) {
	if !Enabled {
		b.Skip("the firehose needs the calltrail tag")
	}
	path := filepath.Join(b.TempDir(), "firehose.out")
	stop := useTracer(b, path, options{buffer: defaultBuffer, full: policy})
	b.ReportAllocs()
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 2*runtime.GOMAXPROCS(0); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)); i <= b.N; i = int(next.Add(1)) {
				guarded(i)
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	stop()
	s := summarize(b, path)
	total := s.Calls + s.Stats.DroppedCalls
	if total > 0 {
		b.ReportMetric(100*float64(s.Stats.DroppedCalls)/float64(total), "%dropped")
	}
	b.ReportMetric(float64(s.Stats.HeldNs)/float64(b.N), "held-ns/call")
}

// seedTrace is the original functrace: caller from runtime.Caller and
// FuncForPC, goroutine id parsed from runtime.Stack, a global mutex and
// map for the depth, and Printf of every line.
var (
	seedMu    sync.Mutex
	seedDepth           = map[uint64]int{}
	seedOut   io.Writer = io.Discard
)

func seedGID() uint64 {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	b = b[:bytes.IndexByte(b, ' ')]
	n, _ := strconv.ParseUint(string(b), 10, 64)
	return n
}

func seedTraceFn() func() {
	pc, _, _, ok := runtime.Caller(1)
	if !ok {
		panic("not found caller")
	}
	name := runtime.FuncForPC(pc).Name()
	gid := seedGID()
	seedMu.Lock()
	indents := seedDepth[gid]
	seedDepth[gid] = indents + 1
	fmt.Fprintf(seedOut, "g[%02d]:%s->%s\n", gid, indentTabs(indents+1), name)
	seedMu.Unlock()
	return func() {
		seedMu.Lock()
		indents := seedDepth[gid]
		seedDepth[gid] = indents - 1
		fmt.Fprintf(seedOut, "g[%02d]:%s<-%s\n", gid, indentTabs(indents), name)
		seedMu.Unlock()
	}
}

func indentTabs(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '\t'
	}
	return string(b)
}

//go:noinline
func seeded(x int) int {
	defer seedTraceFn()()
	return x*3 + 1
}

// BenchmarkSeed is the original tool, for comparison in the same run.
func BenchmarkSeed(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		seeded(i)
	}
}

func summarize(tb testing.TB, path string) tracefile.Summary {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	r, err := tracefile.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := tracefile.Summarize(r)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
