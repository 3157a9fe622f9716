package web

import (
	"bytes"
	"math/rand"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

func TestWindow(t *testing.T) {
	tr := loadTrace(t, 1000) // main.work at 1ms+1000k+100 for 900ns, main.leaf 400ns inside
	l := tr.ix.lanes[tr.ix.byG[1]]
	calls := func(items []item) (n int) {
		for _, it := range items {
			n += it.count
		}
		return n
	}
	for _, tc := range []struct {
		name           string
		from, to, px   int64
		maxItems       int
		calls          int // calls the bars stand for
		wantCall, wide uint32
	}{
		// The whole trace on 100 pixels: main.main and a few blocks of work.
		{"whole", 0, 2_100_000, 100, 110, 2001, 0, fnMain},
		// One main.work call and its leaf, drawn apart.
		{"one call", 1_500_000, 1_501_000, 1000, 3, 3, fnLeaf, fnWork},
		// Within main.leaf: it and its callers are still running.
		{"inside", 1_500_400, 1_500_500, 1000, 3, 3, fnLeaf, fnMain},
		// After main.main: nothing.
		{"after", 2_020_000, 2_030_000, 1000, 0, 0, 0, 0},
	} {
		items := l.window(tc.from, tc.to, (tc.to-tc.from)/tc.px, 1<<30, nil)
		if len(items) > tc.maxItems || calls(items) != tc.calls {
			t.Errorf("%s: %d bars for %d calls, want at most %d for %d", tc.name, len(items), calls(items), tc.maxItems, tc.calls)
		}
		found := map[uint32]bool{}
		for _, it := range items {
			if it.count == 1 {
				found[it.fn] = true
				if it.call < 0 || l.fn[it.call] != it.fn {
					t.Errorf("%s: bar of a call with index %d", tc.name, it.call)
				}
			}
			if it.start+it.dur <= tc.from || it.start >= tc.to {
				t.Errorf("%s: bar %+v outside the window", tc.name, it)
			}
		}
		for _, fn := range []uint32{tc.wantCall, tc.wide} {
			if fn != 0 && !found[fn] {
				t.Errorf("%s: no bar for function %d in %+v", tc.name, fn, items)
			}
		}
	}
}

func TestTreeFilters(t *testing.T) {
	s := New(loadTrace(t, 5), nil, nil)
	for _, tc := range []struct {
		query string
		funcs []uint32 // of the rows
	}{
		{"in=1", []uint32{fnMain}},
		{"in=1&call=0", []uint32{fnWork, fnWork, fnWork, fnWork, fnWork}},
		{"in=1&call=1", []uint32{fnLeaf}},
		{"in=1&F=main%5C.leaf", []uint32{fnLeaf, fnLeaf, fnLeaf, fnLeaf, fnLeaf}},
		{"in=1&call=0&N=main.work", nil},
		{"in=1&call=0&D=1", nil},
		{"in=1&call=0&D=2", []uint32{fnWork, fnWork, fnWork, fnWork, fnWork}},
		{"in=1&call=0&t=1us", nil},
		{"in=1&call=0&t=900ns", []uint32{fnWork, fnWork, fnWork, fnWork, fnWork}},
		// main.main starts before the window: its calls in it take its place.
		{"in=1&window=1.0021ms-1.004ms", []uint32{fnWork, fnWork}},
		{"in=2&F=main.D", []uint32{fnD}},
		{"in=2&F=main.D&N=main.worker", nil},
	} {
		q, _ := url.ParseQuery(tc.query)
		v, err := s.tree(nil, nil, &params{q: q})
		if err != nil {
			t.Errorf("%s: %v", tc.query, err)
			continue
		}
		var got []uint32
		for _, r := range v.(treeJSON).Rows {
			got = append(got, r.Func)
		}
		if len(got) != len(tc.funcs) {
			t.Errorf("%s: rows of functions %v, want %v", tc.query, got, tc.funcs)
			continue
		}
		for i := range got {
			if got[i] != tc.funcs[i] {
				t.Errorf("%s: rows of functions %v, want %v", tc.query, got, tc.funcs)
				break
			}
		}
	}
}

// TestTreePaging reads a long list of calls in pages.
func TestTreePaging(t *testing.T) {
	s := New(loadTrace(t, 1200), nil, nil)
	n, after := 0, 0
	for pages := 0; pages < 10; pages++ {
		q := url.Values{"in": {"1"}, "call": {"0"}, "after": {strconv.Itoa(after)}}
		v, err := s.tree(nil, nil, &params{q: q})
		if err != nil {
			t.Fatal(err)
		}
		tj := v.(treeJSON)
		n += len(tj.Rows)
		if tj.More < 0 {
			break
		}
		after = tj.More
	}
	if n != 1200 {
		t.Errorf("%d rows in all, want 1200", n)
	}
}

// randomLane builds a lane of n calls: loops of short calls, with a wide
// call now and then, nested up to four deep, one in eight returning one
// of three errors.
func randomLane(rng *rand.Rand, n int) *lane {
	l := &lane{g: 1}
	at := int64(0)
	var call func(depth int)
	call = func(depth int) {
		if l.len() >= n {
			return
		}
		l.enter(uint32(1+rng.Intn(3)), at)
		at += int64(rng.Intn(50))
		if depth < 4 {
			for k := rng.Intn(6); k > 0; k-- {
				call(depth + 1)
			}
		}
		if rng.Intn(40) == 0 {
			at += 100_000 // a wide one
		}
		at += int64(1 + rng.Intn(50))
		err := uint32(0)
		if rng.Intn(8) == 0 {
			err = uint32(1 + rng.Intn(3))
		}
		l.exitCall(at, tracefile.Return, err, 0)
		at += int64(rng.Intn(30))
	}
	for l.len() < n {
		call(1)
	}
	l.listFailed(func(uint32) bool { return true })
	return l
}

// TestWindowRandom checks window on random lanes against what it must
// keep: every call at least minDur long that overlaps the window is a
// bar of its own, and over the whole lane the bars stand for every call
// and every failed call.
func TestWindowRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := range 200 {
		l := randomLane(rng, 1+rng.Intn(3000))
		end := l.end(0)
		for i := 0; i < l.len(); i = int(l.next[i]) {
			end = max(end, l.end(i))
		}
		from := rng.Int63n(end + 1)
		to := from + 1 + rng.Int63n(end-from+10)
		minDur := 1 + rng.Int63n(max((to-from)/50, 1))
		if trial%4 == 0 {
			from, to = 0, end+1
		}
		items := l.window(from, to, minDur, 1<<30, nil)
		seen := map[int]bool{}
		n, failed := 0, int32(0)
		for _, it := range items {
			n += it.count
			failed += it.failed
			if it.call >= 0 {
				if seen[it.call] {
					t.Fatalf("trial %d: call %d twice", trial, it.call)
				}
				seen[it.call] = true
				if it.err != l.errAt(it.call) || it.failed != min(int32(it.err), 1) {
					t.Fatalf("trial %d: call %d returned error %d, its bar says %d, %d failed", trial, it.call, l.errAt(it.call), it.err, it.failed)
				}
			}
		}
		for i := 0; i < l.len(); i++ {
			if l.dur[i] >= minDur && l.start[i] < to && l.end(i) > from && !seen[i] {
				t.Fatalf("trial %d: wide call %d (%d+%d) missing from window %d-%d, minDur %d", trial, i, l.start[i], l.dur[i], from, to, minDur)
			}
		}
		if from == 0 && to == end+1 && (n != l.len() || int(failed) != len(l.failed)) {
			t.Fatalf("trial %d: bars stand for %d calls of %d, %d failed of %d", trial, n, l.len(), failed, len(l.failed))
		}
	}
}

// BenchmarkWindowLoop measures the whole of a lane that is a loop of a
// million short calls, drawn on 1280 pixels.
func BenchmarkWindowLoop(b *testing.B) {
	l := &lane{g: 1}
	l.enter(1, 0)
	for i := range int64(1_000_000) {
		l.enter(2, 10+i*100)
		l.exitCall(10+i*100+60, tracefile.Return, 0, 0)
	}
	l.exitCall(100_000_100, tracefile.Return, 0, 0)
	var items []item
	b.ResetTimer()
	for range b.N {
		items = l.window(0, 100_000_200, 100_000_200/1280, maxRows, items[:0])
	}
	b.ReportMetric(float64(len(items)), "bars")
}

// TestWindowOpenNarrow checks a narrow call still running at the
// window's start: its block stands for it and its callees, once, and
// the callees after the start draw no bars of their own.
func TestWindowOpenNarrow(t *testing.T) {
	l := &lane{g: 1}
	l.enter(1, 0) // wide, 0-1000
	l.enter(2, 100)
	l.enter(3, 101)
	l.exitCall(102, tracefile.Return, 0, 0)
	l.enter(3, 106) // after the window's start
	l.exitCall(107, tracefile.Return, 0, 0)
	l.exitCall(110, tracefile.Return, 0, 0)
	l.exitCall(1000, tracefile.Return, 0, 0)
	items := l.window(105, 1000, 50, 1<<30, nil)
	n := 0
	for _, it := range items {
		n += it.count
	}
	if len(items) != 2 || n != 4 || items[1].first != 2 {
		t.Errorf("bars %+v stand for %d calls; want 2 bars for 4 calls, the block's first call of function 2", items, n)
	}
	// Deeper than the limit: only the wide call.
	if items := l.window(105, 1000, 50, 1, nil); len(items) != 1 || items[0].fn != 1 {
		t.Errorf("with depth 1: bars %+v, want the outermost call alone", items)
	}
}

// TestManyGoroutinesMemory loads a trace of 200,000 goroutines making one
// call each, as programs that start a goroutine per item do: the index
// must keep memory in proportion to the calls, not reserve room for many
// calls in every goroutine.
func TestManyGoroutinesMemory(t *testing.T) {
	const n = 200_000
	var buf bytes.Buffer
	e, _ := tracewrite.NewEncoder(&buf, map[string]string{"program": "many"})
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.main"}, {Name: "main.work"}})
	var b tracewrite.Batch
	at := int64(0)
	for g := uint64(2); g < n+2; g++ {
		b.Goroutine(tracefile.Goroutine{ID: g, Parent: 1, CreatorFunc: 1}, at)
		b.Enter(g, 2, at+10)
		b.Exit(g, tracefile.Return, at+20)
		at += 30
	}
	e.Events(&b)
	e.Clock(at, at)
	e.End("main returned", time.Unix(0, 0))
	e.Flush()
	path := filepath.Join(t.TempDir(), "many.out")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	kept := after.HeapAlloc - before.HeapAlloc
	if limit := 60 * uint64(buf.Len()); kept > limit {
		t.Errorf("%d goroutines in %d bytes keep %d MB, more than %d MB", n, buf.Len(), kept>>20, limit>>20)
	}
	t.Logf("%d goroutines, %d bytes of trace: %d MB kept", n, buf.Len(), kept>>20)
	runtime.KeepAlive(tr)
}
