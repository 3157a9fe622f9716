//go:build calltrail

package calltrail

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/clock"
	"github.com/calltrail/calltrail/internal/gstate"
	"github.com/calltrail/calltrail/tracefile"
)

// trace is what a test reads back: per goroutine, its events as
// "->name" and "<-name" or "<-name (panic)".
type trace struct {
	calls map[uint64][]string
	gs    map[uint64]tracefile.Goroutine
	names func(uint32) string
	stats tracefile.Stats
	end   string
}

func readTrace(t *testing.T, path string) trace {
	t.Helper()
	r := openTrace(t, path)
	tr := trace{calls: map[uint64][]string{}, gs: map[uint64]tracefile.Goroutine{}}
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		name := r.Func(ev.Func).Name
		switch ev.Kind {
		case tracefile.EnterEvent:
			tr.calls[ev.G] = append(tr.calls[ev.G], "->"+name)
		case tracefile.ExitEvent:
			s := "<-" + name
			if ev.Exit != tracefile.Return {
				s += " (" + ev.Exit.String() + ")"
			}
			if ev.Err != 0 {
				e := r.Error(ev.Err)
				s += " err=" + e.Type + " " + strconv.Quote(e.Message)
			}
			if ev.Time < ev.Start {
				t.Errorf("%s ends before it starts", name)
			}
			tr.calls[ev.G] = append(tr.calls[ev.G], s)
		case tracefile.ValueEvent:
			s := "arg="
			if ev.Value.Result {
				s = "result="
			}
			tr.calls[ev.G] = append(tr.calls[ev.G], s+ev.Value.String())
		case tracefile.GoroutineEvent:
			g, _ := r.Goroutine(ev.G)
			tr.gs[ev.G] = g
		}
	}
	tr.names = func(id uint32) string { return r.Func(id).Name }
	tr.stats = r.Stats()
	tr.end, _ = r.End()
	checkSummary(t, path)
	return tr
}

// openTrace opens the trace at path for reading, until the test ends.
func openTrace(t *testing.T, path string) *tracefile.Reader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := tracefile.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkSummary checks that the summary chunk a trace ends with, which
// info reads instead of the events, says what reading every event does;
// and that a trace whose tracing ended has one.
func checkSummary(t *testing.T, path string) {
	t.Helper()
	f, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, ok := f.Summary()
	scan, err := tracefile.Summarize(f.Reader)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	switch _, ended := f.End(); {
	case !ok && ended:
		t.Errorf("%s: tracing ended (%s), but the trace has no summary", path, scan.End)
	case ok && !reflect.DeepEqual(sum, scan):
		t.Errorf("%s: the summary says\n%+v\nreading every event says\n%+v", path, sum, scan)
	}
}

// record runs fn with a fresh tracer and returns its trace.
func record(t *testing.T, o options, fn func()) trace {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.out")
	stop := useTracer(t, path, o)
	for i := range funcs {
		funcs[i].id.Store(0) // ids belong to the tracer that gave them
	}
	fn()
	stop()
	return readTrace(t, path)
}

var funcs = [...]Func{
	{Name: "test.outer"}, {Name: "test.inner"}, {Name: "test.leaf"}, {Name: "test.rec"}, {Name: "test.panics"},
	{Name: "test.recovers"}, {Name: "test.goexits"}, {Name: "test.deferred"}, {Name: "test.root"},
	{Name: "test.fails"}, {Name: "test.(*traced).Error"}, {Name: "test.wraps"}, {Name: "test.values"},
}

// call runs body as traced function f, with the instrumenter's guard.
func call(f *Func, body func()) {
	if Enabled {
		if c := Enter(f); c != 0 {
			defer Exit(c)
		}
	}
	body()
}

func tree() {
	call(&funcs[0], func() {
		call(&funcs[1], func() { call(&funcs[2], func() {}) })
		call(&funcs[2], func() {})
	})
}

var treeWant = "->test.outer ->test.inner ->test.leaf <-test.leaf <-test.inner ->test.leaf <-test.leaf <-test.outer"

func TestCallTree(t *testing.T) {
	var g uint64
	tr := record(t, options{}, func() {
		g = gstate.Goid()
		tree()
	})
	if got := strings.Join(tr.calls[g], " "); got != treeWant {
		t.Errorf("goroutine %d:\ngot  %s\nwant %s", g, got, treeWant)
	}
	if tr.stats.Calls != 4 || tr.stats.DroppedCalls != 0 {
		t.Errorf("stats = %+v, want 4 calls, none dropped", tr.stats)
	}
	if tr.end != "stopped" {
		t.Errorf("end = %q, want stopped", tr.end)
	}
}

// TestManyGoroutines runs 1,000 goroutines, each with its own recursion
// depth, and checks every call of every goroutine came back, in order.
func TestManyGoroutines(t *testing.T) {
	n := 1000
	if !gstate.Fast() {
		n = 250 // runtime.Stack for every call: 1,000 took 20 s under qemu
	}
	ids := make([]uint64, n)
	tr := record(t, options{buffer: 64 << 20}, func() {
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ids[i] = gstate.Goid()
				tracedRecursion(i%50 + 1)
			}()
		}
		wg.Wait()
	})
	total := 0
	for i, g := range ids {
		depth := i%50 + 1
		want := strings.TrimSpace(strings.Repeat("->test.rec ", depth) + strings.Repeat("<-test.rec ", depth))
		if got := strings.Join(tr.calls[g], " "); got != want {
			t.Fatalf("goroutine %d (depth %d):\ngot  %.200s\nwant %.200s", g, depth, got, want)
		}
		total += depth
	}
	if tr.stats.Calls != uint64(total) {
		t.Errorf("calls = %d, want %d", tr.stats.Calls, total)
	}
}

func TestDeepRecursion(t *testing.T) {
	depth := 100_000
	if !gstate.Fast() {
		// runtime.Stack, the fallback's source of goroutine ids, walks
		// the whole stack: deep recursion costs quadratic time there.
		depth = 2_000
	}
	var g uint64
	tr := record(t, options{buffer: 64 << 20}, func() {
		g = gstate.Goid()
		tracedRecursion(depth)
	})
	if got := len(tr.calls[g]); got != 2*depth {
		t.Fatalf("got %d events, want %d", got, 2*depth)
	}
	if tr.calls[g][depth-1] != "->test.rec" || tr.calls[g][depth] != "<-test.rec" {
		t.Errorf("turning point: %v", tr.calls[g][depth-1:depth+1])
	}
}

// TestWaitKeepsEveryCall fills the smallest rings from eight goroutines
// at once while the disk stalls, so that the writer cannot drain them:
// under the default policy the goroutines wait for room, and every call
// is in the trace, in order.
func TestWaitKeepsEveryCall(t *testing.T) {
	const gs, depth = 8, 20
	ids := make([]uint64, gs)
	reps := make([]int, gs)
	path := filepath.Join(t.TempDir(), "trace.out")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	disk := newGate(f)
	stop := useTracerOn(t, disk, options{buffer: 1, every: 1e6})
	funcs[3].id.Store(0)
	disk.set(true)
	// The goroutines call until one of them has waited: however fast
	// the machine, the writer's buffers and then the rings fill.
	var waited atomic.Bool
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = gstate.Goid()
			for !waited.Load() {
				tracedRecursion(depth)
				reps[i]++
			}
		}()
	}
	// The writer fills the file's buffers, then waits for the disk, and
	// the rings fill: someone waits for room (and counts the wait once
	// it has room).
	for deadline := time.Now().Add(time.Minute); !tr.waiting(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			waited.Store(true)
			disk.set(false)
			wg.Wait()
			stop()
			t.Fatal("no goroutine waited for room in a minute with the disk stalled")
		}
	}
	waited.Store(true)
	disk.set(false)
	wg.Wait()
	stop()
	tr := readTrace(t, path)
	one := strings.Repeat("->test.rec ", depth) + strings.Repeat("<-test.rec ", depth)
	calls := 0
	for i, g := range ids {
		calls += reps[i] * depth
		if got, want := strings.Join(tr.calls[g], " "), strings.TrimSpace(strings.Repeat(one, reps[i])); got != want {
			t.Fatalf("goroutine %d: %d events, want %d", g, len(tr.calls[g]), 2*depth*reps[i])
		}
	}
	if tr.stats.DroppedCalls != 0 || tr.stats.Calls != uint64(calls) {
		t.Errorf("stats = %+v, want %d calls, none dropped", tr.stats, calls)
	}
	if tr.stats.Waits == 0 || tr.stats.HeldNs == 0 {
		t.Errorf("stats = %+v: no goroutine waited for room in rings of %d slots", tr.stats, 1024)
	}
}

// TestRecursionDeeperThanRing records a recursion several times deeper
// than a ring holds: open calls own no slots under the default policy, so
// it neither drops calls nor deadlocks.
func TestRecursionDeeperThanRing(t *testing.T) {
	depth := 20_000 // rings of 1,024 slots
	if !gstate.Fast() {
		// The fallback reads the goroutine id from runtime.Stack, which
		// walks the whole stack: a call costs its depth, and 20,000
		// took nine minutes under qemu, 3,000 took 25 s.
		depth = 2_000
	}
	var g uint64
	tr := record(t, options{buffer: 1}, func() {
		g = gstate.Goid()
		tracedRecursion(depth)
	})
	if got := len(tr.calls[g]); got != 2*depth || tr.stats.DroppedCalls != 0 {
		t.Fatalf("got %d events and %d dropped calls, want %d events", got, tr.stats.DroppedCalls, 2*depth)
	}
}

var errBoom = errors.New("boom")

func TestPanicExits(t *testing.T) {
	var got any
	var g uint64
	tr := record(t, options{}, func() {
		g = gstate.Goid()
		call(&funcs[5], func() { // recovers
			defer func() {
				got = recover()
				// A normal call inside a deferred function while a
				// panic is in progress returns normally.
				call(&funcs[7], func() {})
			}()
			call(&funcs[1], func() {
				call(&funcs[4], func() { panic(errBoom) })
			})
		})
	})
	if got != errBoom {
		t.Errorf("recover() = %v, want the panic's own value", got)
	}
	want := "->test.recovers ->test.inner ->test.panics <-test.panics (panic) <-test.inner (panic) ->test.deferred <-test.deferred <-test.recovers"
	if s := strings.Join(tr.calls[g], " "); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}

// TestDeepPanic panics 10,000 traced frames deep and recovers at the top,
// five times, as recursive parsers do. Every frame's exit reads as left by
// the panic, and classifying them looks at each return address once, not
// at the whole stack per frame: linear in the depth.
func TestDeepPanic(t *testing.T) {
	if gstate.Hops() < 0 {
		t.Skip("no frame pointers to follow on this platform: exits are classified by runtime.Callers")
	}
	const depth, rounds = 10_000, 5
	var rec func(d int)
	rec = func(d int) {
		call(&funcs[3], func() {
			if d == 1 {
				panic(errBoom)
			}
			rec(d - 1)
		})
	}
	var g uint64
	walks, lookups := stackWalks.Load(), frameLookups.Load()
	tr := record(t, options{buffer: 64 << 20}, func() {
		g = gstate.Goid()
		for r := 0; r < rounds; r++ {
			call(&funcs[5], func() { // recovers
				defer func() { recover() }()
				rec(depth)
			})
		}
	})
	panics := 0
	for _, e := range tr.calls[g] {
		if e == "<-test.rec (panic)" {
			panics++
		}
	}
	if panics != depth*rounds {
		t.Errorf("%d exits by panic, want %d", panics, depth*rounds)
	}
	if n := stackWalks.Load() - walks; n != 0 {
		t.Errorf("%d whole stacks walked for panics that were recovered", n)
	}
	if n := frameLookups.Load() - lookups; n > 50 {
		t.Errorf("%d return addresses looked up for %d exits: the cache does not hold", n, depth*rounds)
	}
}

// TestDeepGoexit leaves 10,000 traced frames by runtime.Goexit: every
// exit reads as left by Goexit, each return address looked up once.
func TestDeepGoexit(t *testing.T) {
	if gstate.Hops() < 0 {
		t.Skip("no frame pointers to follow on this platform: exits are classified by runtime.Callers")
	}
	const depth = 10_000
	var rec func(d int)
	rec = func(d int) {
		call(&funcs[6], func() {
			if d == 1 {
				runtime.Goexit()
			}
			rec(d - 1)
		})
	}
	var g uint64
	walks, lookups := stackWalks.Load(), frameLookups.Load()
	tr := record(t, options{buffer: 64 << 20}, func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			g = gstate.Goid()
			rec(depth)
		}()
		<-done
	})
	n := 0
	for _, e := range tr.calls[g] {
		if e == "<-test.goexits (goexit)" {
			n++
		}
	}
	if n != depth {
		t.Errorf("%d exits by Goexit, want %d", n, depth)
	}
	if w, l := stackWalks.Load()-walks, frameLookups.Load()-lookups; w != 0 || l > 50 {
		t.Errorf("%d stacks walked and %d return addresses looked up for %d exits", w, l, depth)
	}
}

// TestFatalPanicWalksOnce leaves a goroutine's first traced call by a
// panic inside a recursion of the same function, recovered by an untraced
// frame below: only the outermost call's exit looks at the whole stack.
func TestFatalPanicWalksOnce(t *testing.T) {
	var rec func(d int)
	rec = func(d int) {
		call(&funcs[3], func() {
			if d == 1 {
				panic(errBoom)
			}
			rec(d - 1)
		})
	}
	walks := stackWalks.Load()
	record(t, options{}, func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() { recover() }()
			rec(1000)
		}()
		<-done
	})
	if n := stackWalks.Load() - walks; n != 1 {
		t.Errorf("%d whole stacks walked, want 1", n)
	}
}

func TestGoexitExits(t *testing.T) {
	var g uint64
	tr := record(t, options{}, func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			g = gstate.Goid()
			call(&funcs[8], func() {
				call(&funcs[6], func() { runtime.Goexit() })
			})
		}()
		<-done
	})
	want := "->test.root ->test.goexits <-test.goexits (goexit) <-test.root (goexit)"
	if s := strings.Join(tr.calls[g], " "); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}

// spawner starts a goroutine, and returns the line of its go statement.
//
//go:noinline
func spawner(done chan uint64) (goLine int) {
	_, _, line, _ := runtime.Caller(0)
	go func() {
		call(&funcs[2], func() {})
		done <- gstate.Goid()
	}()
	return line + 1
}

func TestGoroutineParents(t *testing.T) {
	if !gstate.HasParents() {
		t.Skipf("%s on %s: the runtime does not expose parent goroutines", runtime.Version(), runtime.GOARCH)
	}
	var parent, child uint64
	var goLine int
	tr := record(t, options{}, func() {
		parent = gstate.Goid()
		done := make(chan uint64)
		goLine = spawner(done)
		child = <-done
	})
	g, ok := tr.gs[child]
	if !ok {
		t.Fatalf("no record of goroutine %d", child)
	}
	if g.Parent != parent {
		t.Errorf("parent = %d, want %d", g.Parent, parent)
	}
	if name := tr.names(g.CreatorFunc); !strings.HasSuffix(name, ".spawner") {
		t.Errorf("created by %q, want calltrail.spawner", name)
	}
	if name := tr.names(g.StartFunc); !strings.HasSuffix(name, ".spawner.func1") {
		t.Errorf("started at %q, want calltrail.spawner.func1", name)
	}
	if g.CreatorLine != goLine {
		t.Errorf("created at line %d, want %d, the go statement's", g.CreatorLine, goLine)
	}
}

type T struct{}

//go:noinline
func (*T) M() { defer Trace()() }

//go:noinline
func manualOuter() {
	defer Trace()()
	func() {
		defer Trace()()
		new(T).M()
	}()
}

func TestTraceNames(t *testing.T) {
	var g uint64
	tr := record(t, options{}, func() {
		g = gstate.Goid()
		manualOuter()
	})
	p := "github.com/calltrail/calltrail."
	want := fmt.Sprintf("->%[1]smanualOuter ->%[1]smanualOuter.func1 ->%[1]s(*T).M <-%[1]s(*T).M <-%[1]smanualOuter.func1 <-%[1]smanualOuter", p)
	if s := strings.Join(tr.calls[g], " "); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}

func TestZeroAllocs(t *testing.T) {
	skipFallback(t)
	record(t, options{}, func() {
		tree() // register the functions
		if n := testing.AllocsPerRun(1000, func() {
			if c := Enter(&funcs[2]); c != 0 {
				Exit(c)
			}
		}); n != 0 {
			t.Errorf("Enter+Exit: %v allocations per call", n)
		}
		manualOuter()
		if n := testing.AllocsPerRun(1000, func() { (*T).M(nil) }); n != 0 {
			t.Errorf("defer Trace()(): %v allocations per call", n)
		}
	})
}

func TestPauseResume(t *testing.T) {
	var g uint64
	tr := record(t, options{}, func() {
		g = gstate.Goid()
		call(&funcs[0], func() {
			Pause()
			call(&funcs[1], func() {}) // not recorded
			Resume()
		}) // recorded: its enter was
		Pause()
		call(&funcs[2], func() {})
		Resume()
	})
	if s := strings.Join(tr.calls[g], " "); s != "->test.outer <-test.outer" {
		t.Errorf("got %s", s)
	}
}

// TestDropWholeCalls fills a tiny ring under CALLTRAIL_FULL=drop and
// checks that every recorded call has its exit and the rest are counted.
func TestDropWholeCalls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.out")
	stop := useTracer(t, path, options{buffer: 1, full: fullDrop})
	funcs[3].id.Store(0)
	s := &tr.rings[gstate.Goid()&tr.ringMask]
	// Fill the ring from this goroutine faster than anything can drain
	// it: open calls pile up, each owing its exit.
	var open []Call
	for i := 0; i < 5000; i++ {
		open = append(open, Enter(&funcs[3]))
	}
	refused := 0
	for _, c := range open {
		if c == 0 {
			refused++
		}
	}
	for i := len(open) - 1; i >= 0; i-- {
		Exit(open[i])
	}
	_ = s
	stop()
	trc := readTrace(t, path)
	if refused == 0 {
		t.Fatalf("no call refused with a ring of %d slots", s.Len())
	}
	if trc.stats.DroppedCalls != uint64(refused) {
		t.Errorf("dropped = %d, want %d", trc.stats.DroppedCalls, refused)
	}
	if trc.stats.Calls+trc.stats.DroppedCalls != 5000 {
		t.Errorf("calls %d + dropped %d != 5000", trc.stats.Calls, trc.stats.DroppedCalls)
	}
}

// TestFallbacks traces with the paths used where the runtime's g or the
// cycle counter cannot be used: goroutine ids from runtime.Stack, time
// from the monotonic clock, exits classified from the stack.
func TestFallbacks(t *testing.T) {
	setup()
	defer setHot()
	defer gstate.Fallback()()
	defer clock.Monotonic()()
	setHot()
	TestCallTree(t)
	TestPanicExits(t)
	TestGoexitExits(t)
	TestTraceNames(t)
}

// A gate holds back writes to a file while it is shut: a disk that
// stalls, for the writer to wait on.
type gate struct {
	*os.File
	mu   sync.Mutex
	cond *sync.Cond
	shut bool
}

func newGate(f *os.File) *gate {
	g := &gate{File: f}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *gate) set(shut bool) {
	g.mu.Lock()
	g.shut = shut
	g.mu.Unlock()
	g.cond.Broadcast()
}

func (g *gate) Write(p []byte) (int, error) {
	g.mu.Lock()
	for g.shut {
		g.cond.Wait()
	}
	g.mu.Unlock()
	return g.File.Write(p)
}

// tracedRecursion makes depth nested traced calls of test.rec.
func tracedRecursion(depth int) {
	call(&funcs[3], func() {
		if depth > 1 {
			tracedRecursion(depth - 1)
		}
	})
}

// TestMigration runs more goroutines than Ps, with more Ps than cores,
// that yield, block and end each other's spans inside traced calls, in
// the smallest rings: their events go to the rings of whichever Ps they
// run on, and the trace must still hold each goroutine's calls in order,
// each under the span that was open when it began. Then again with more
// Ps than the tracer has rings for, which share the last ring; and with
// a table of the goroutines' latest rings of four entries, whose
// goroutines take each other's entries, so that their barriers do not
// know their previous ring.
func TestMigration(t *testing.T) {
	t.Run("rings of Ps", func(t *testing.T) { migrate(t, false, false) })
	t.Run("shared ring", func(t *testing.T) { migrate(t, true, false) })
	t.Run("where table lost", func(t *testing.T) { migrate(t, false, true) })
}

func migrate(t *testing.T, shared, collide bool) {
	// The shared ring takes the calls of goroutines on the Ps past the
	// rings' only if the scheduler runs some there, which on a busy
	// machine it may not do in one round (go1.22, beside the race
	// detector's tests): a few rounds, each a fresh trace.
	for round := 1; !migrateOnce(t, shared, collide); round++ {
		if round == 10 {
			t.Fatalf("%d rounds, and no slot taken in the shared ring", round)
		}
	}
}

// migrateOnce is a round of migrate; false if it wanted the shared ring
// used and the scheduler did not use it.
func migrateOnce(t *testing.T, shared, collide bool) bool {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const gs, reps, depth = 32, 200, 6
	ids := make([]uint64, gs)
	path := filepath.Join(t.TempDir(), "trace.out")
	// Rings of a thousand slots, one per P (8 rings' worth of buffer).
	stop := useTracer(t, path, options{buffer: 8 * minRing * slotSize, every: time.Millisecond})
	if shared {
		runtime.GOMAXPROCS(tr.perP + 3)
	}
	if collide {
		tr.whereMask = 3
	}
	for i := range funcs {
		funcs[i].id.Store(0)
	}
	ends := make(chan [8]byte)
	ended := make(chan bool)
	go func() { // ends the spans the goroutines hand it
		for id := range ends {
			SpanEnd(id)
			ended <- true
		}
	}()
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = gstate.Goid()
			var nest func(d int)
			nest = func(d int) {
				call(&funcs[3], func() {
					switch d % 3 {
					case 0:
						runtime.Gosched()
					case 1:
						time.Sleep(time.Microsecond)
					}
					if d > 1 {
						nest(d - 1)
					}
				})
			}
			for r := range reps {
				id := [8]byte{byte(i + 1), byte(r + 1)}
				SpanStart([16]byte{1}, id, [8]byte{}, false, 1, "s")
				nest(depth)
				ends <- id
				<-ended
				call(&funcs[2], func() {})
			}
		}()
	}
	wg.Wait()
	close(ends)
	// The test is of events in several rings, and, when shared, in the
	// shared ring.
	barriers, inShared := tr.barriers.Load(), tr.rings[tr.perP].Head()
	stop()
	if shared && inShared == 0 {
		return false
	}
	if barriers == 0 {
		t.Fatalf("%d barriers", barriers)
	}

	r := openTrace(t, path)
	got := map[uint64][]string{}
	var ev tracefile.Event
	for {
		if err := r.Read(&ev); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		span := "-"
		if ev.Span != (tracefile.SpanID{}) {
			span = "s"
		}
		switch ev.Kind {
		case tracefile.EnterEvent:
			got[ev.G] = append(got[ev.G], "->"+r.Func(ev.Func).Name+"@"+span)
		case tracefile.ExitEvent:
			got[ev.G] = append(got[ev.G], "<-"+r.Func(ev.Func).Name)
		}
	}
	one := strings.Repeat("->test.rec@s ", depth) + strings.Repeat("<-test.rec ", depth) + "->test.leaf@- <-test.leaf "
	want := strings.Fields(strings.Repeat(one, reps))
	for _, g := range ids {
		evs := got[g]
		for k := range max(len(evs), len(want)) {
			if k >= len(evs) || k >= len(want) || evs[k] != want[k] {
				lo := max(k-4, 0)
				t.Fatalf("goroutine %d: %d events, want %d; from event %d:\ngot  %v\nwant %v",
					g, len(evs), len(want), lo, evs[lo:min(k+4, len(evs))], want[lo:min(k+4, len(want))])
			}
		}
	}
	if st := r.Stats(); st.DroppedCalls != 0 || st.Calls != gs*reps*(depth+1) {
		t.Errorf("stats = %+v, want %d calls, none dropped", st, gs*reps*(depth+1))
	}
	return true
}

// TestRingMemory checks that CALLTRAIL_BUFFER bounds the rings' memory
// however many Ps there are: past the rings it pays for, Ps share the
// last one.
func TestRingMemory(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct{ buffer, procs int }{
		{64 << 10, 64}, {1 << 20, 200}, {32 << 20, 4}, {1, 8},
	} {
		runtime.GOMAXPROCS(c.procs)
		stop := useTracer(t, filepath.Join(t.TempDir(), "trace.out"), options{buffer: c.buffer})
		bytes := 0
		for i := range tr.rings {
			bytes += tr.rings[i].Len() * slotSize
		}
		rings, perP := len(tr.rings), tr.perP
		stop()
		if limit := max(c.buffer, 2*minRing*slotSize); bytes > limit {
			t.Errorf("buffer %d, %d Ps: %d rings of %d bytes in all, over %d", c.buffer, c.procs, rings, bytes, limit)
		}
		if perP != rings-1 || rings < 2 {
			t.Errorf("buffer %d, %d Ps: %d rings, %d of them of Ps", c.buffer, c.procs, rings, perP)
		}
	}
}

// TestHotPathInlined checks that this build, with the compiler's usual
// inlining, is seen to inline, so that the hot path keeps to its
// goroutine's P; built with -l it is not, and the goroutine's StateP
// gives no P (checked by hand: go test -gcflags=-l -run HotPathInlined
// fails here).
func TestHotPathInlined(t *testing.T) {
	if !hotPathInlined() {
		t.Fatal("this build does not inline, or the probe says so wrongly")
	}
}

// notInlined is hotPathInlined's check in a function that cannot be
// inlined into: it must say so, or the check says nothing.
//
//go:noinline
func notInlined() bool { return entryOfCaller() == reflect.ValueOf(notInlined).Pointer() }

func TestEntryOfCaller(t *testing.T) {
	if !notInlined() {
		t.Fatal("entryOfCaller does not give its caller's entry")
	}
}
