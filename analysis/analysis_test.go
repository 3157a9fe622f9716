package analysis

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/tracefile"
)

// build makes a trace from a script (see tracetest.Build).
func build(t *testing.T, script string) *tracefile.Reader {
	t.Helper()
	return tracetest.Read(t, script)
}

// figures are a function's figures, comparable.
type figures struct {
	Calls                 uint64
	Total, Self, Sum, Max int64
	Panics                uint64
}

func funcsOf(p *Profile) map[string]figures {
	m := map[string]figures{}
	for _, f := range p.Funcs {
		m[f.Name] = figures{f.Calls, f.Total, f.Self, f.Sum, f.Max, f.Panics}
	}
	return m
}

// TestRecursion: total counts recursion once, self time is exact, for
// direct and mutual recursion.
func TestRecursion(t *testing.T) {
	p := Analyze(build(t, `
1 +main 0
1 +f 10
1 +f 20
1 +f 30
1 - 40
1 - 50
1 +g 60
1 +h 62
1 +g 64
1 - 70
1 - 75
1 - 80
1 - 90
1 - 100
`), Options{})
	if p.Err != nil {
		t.Fatal(p.Err)
	}
	got := funcsOf(p)
	want := map[string]figures{
		"main": {Calls: 1, Total: 100, Self: 20, Sum: 100, Max: 100},
		"f":    {Calls: 3, Total: 80, Self: 30 + 20 + 10, Sum: 80 + 30 + 10, Max: 80},
		"g":    {Calls: 2, Total: 20, Self: 7 + 6, Sum: 20 + 6, Max: 20},
		"h":    {Calls: 1, Total: 13, Self: 7, Sum: 13, Max: 13},
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: got %+v\nwant %+v", name, got[name], w)
		}
	}
	// Self times add up to the wall time of the root.
	var self int64
	for _, f := range p.Funcs {
		self += f.Self
	}
	if self != 100 {
		t.Errorf("self times add up to %d, want 100", self)
	}
}

// TestChains: the seed's question. D is reached from two chains, one of
// them in a goroutine started from main.
func TestChains(t *testing.T) {
	p := Analyze(build(t, `
1 +main 0
1 +A1 1
1 +D 2
1 - 12
1 - 13
2 go 1 main 14
2 +A2 15
2 +D 16
2 ! 46
2 ! 47
1 +A1 50
1 +D 51
1 - 52
1 - 53
1 - 60
`), Options{Slowest: 2})
	var got []string
	for _, n := range p.Nodes(2 + 1) { // D's id: main=1, A1=2, D=3
		var names []string
		for _, id := range n.Path() {
			names = append(names, p.Name(id))
		}
		s := strings.Join(names, ">")
		for from := range n.Root().SpawnedFrom {
			s += " spawned from " + p.Name(from.Func)
		}
		got = append(got, s)
		if s == "main>A1>D" && (n.Calls != 2 || n.Total != 11 || n.Max != 10 || len(n.Slowest) != 2 || n.Slowest[0].Dur != 10) {
			t.Errorf("main>A1>D: %+v", n)
		}
		if s == "A2>D spawned from main" && (n.Calls != 1 || n.Panics != 1 || n.Slowest[0].G != 2) {
			t.Errorf("A2>D: %+v", n)
		}
	}
	want := "main>A1>D | A2>D spawned from main"
	if strings.Join(got, " | ") != want {
		t.Errorf("chains: %s\nwant    %s", strings.Join(got, " | "), want)
	}

	panics := Analyze(build(t, `
1 +main 0
1 +D 1
1 - 2
1 +D 3
1 ! 9
1 - 10
`), Options{OnlyPanics: true})
	if f := funcsOf(panics)["D"]; f.Calls != 1 || f.Max != 6 {
		t.Errorf("only panics: D = %+v", f)
	}
}

func TestQuantiles(t *testing.T) {
	var script strings.Builder
	at := 0
	for i := 1; i <= 100; i++ {
		script.WriteString("1 +f " + itoa(at) + "\n")
		at += i * 1000
		script.WriteString("1 - " + itoa(at) + "\n")
	}
	p := Analyze(build(t, script.String()), Options{})
	f := p.Funcs[1]
	for _, c := range []struct {
		q    float64
		want int64
	}{{0.5, 50_000}, {0.99, 99_000}, {1, 100_000}} {
		got := int64(f.Quantile(c.q))
		if got > c.want || float64(got) < float64(c.want)*(1-1.0/16) {
			t.Errorf("q%.2f = %d, want within 1/16 below %d", c.q, got, c.want)
		}
	}
	if f.Mean() != 50_500 {
		t.Errorf("mean = %d", f.Mean())
	}
}

func TestFilter(t *testing.T) {
	script := `
1 +main 0
1 +log 1
1 +write 2
1 - 5
1 - 6
1 +work 10
1 - 30
1 - 40
`
	p := Analyze(build(t, script), Options{Filter: &filter.Filter{Hide: regexp.MustCompile(`^log$`)}})
	if _, ok := funcsOf(p)["write"]; ok {
		t.Error("a callee of a hidden function counted")
	}
	if got := funcsOf(p)["main"]; got.Self != 20 {
		t.Errorf("main's self time = %d, want 20: a hidden call's time is its caller's own, as if inlined", got.Self)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestSpawnReadFirst: a child's events may be read before its parent's,
// when the child's ring is written first; the link waits for the parent.
func TestSpawnReadFirst(t *testing.T) {
	p := Analyze(build(t, `
2 go 1 main 14
2 +A2 15
2 - 16
1 +main 0
1 +A1 1
1 - 2
1 - 20
`), Options{})
	var got []string
	p.Walk(func(n *Node) {
		for from := range n.SpawnedFrom {
			got = append(got, p.Name(n.Func)+" from "+p.Name(from.Func))
		}
	})
	if strings.Join(got, ",") != "A2 from main" {
		t.Errorf("spawns: %v, want A2 from main", got)
	}
}

// TestSpawnAfterReturn: a handler, its goroutine's outermost call,
// starts a goroutine and returns before the goroutine's first call: the
// handler's call started it, though the parent's next call, of another
// function, read after the child's, began before the child did.
func TestSpawnAfterReturn(t *testing.T) {
	p := Analyze(build(t, `
1 +main 0
2 go 1 main 5
2 +handle 10
2 - 20
3 go 2 handle 30
3 +audit 30
3 - 40
2 +other 25
2 - 60
1 - 100
`), Options{})
	var got []string
	p.Walk(func(n *Node) {
		for from := range n.SpawnedFrom {
			got = append(got, p.Name(n.Func)+" from "+p.Name(from.Func))
		}
	})
	slices.Sort(got)
	if want := "audit from handle,handle from main,other from main"; strings.Join(got, ",") != want {
		t.Errorf("spawns: %v, want %s", got, want)
	}
}

// TestEveryRootSpawned: a goroutine whose outermost code is not traced
// (a server's connection) runs chain after chain; each says where the
// goroutine was started, once per goroutine however often it runs: two
// connections started from main.serve, the first serving hello, item,
// hello, item, the second item only.
func TestEveryRootSpawned(t *testing.T) {
	p := Analyze(build(t, `
1 +main 0
1 +serve 1
2 go 1 serve 2
3 go 1 serve 3
2 +hello 10
2 - 11
2 +item 12
2 +lookup 13
2 - 14
2 - 15
3 +item 16
3 - 17
2 +hello 18
2 - 19
2 +item 20
2 - 21
1 - 30
1 - 31
`), Options{})
	var got []string
	p.Walk(func(n *Node) {
		for from, k := range n.SpawnedFrom {
			got = append(got, fmt.Sprintf("%s from %s: %d", p.Name(n.Func), p.Name(from.Func), k))
		}
	})
	slices.Sort(got)
	if want := "hello from serve: 1,item from serve: 2"; strings.Join(got, ",") != want {
		t.Errorf("spawns: %v, want %s", got, want)
	}
	// Each connection counts once among the goroutines serve started.
	var serve uint32
	for i, f := range p.FuncTable {
		if f.Name == "serve" {
			serve = uint32(i + 1)
		}
	}
	if p.Creators[serve] != 2 {
		t.Errorf("serve started %d goroutines, want 2", p.Creators[serve])
	}
}

func TestGoroutineSummary(t *testing.T) {
	// Three goroutines: 0-100, 50-60 and 60-200; 200 ns in 4 slices.
	p := &Profile{Root: &Node{}, Duration: 200, Starts: []int64{0, 50, 60}, Lifetimes: []int64{100, 10, 140}, Work: []int64{100, 10, 140}}
	g := p.GoroutineSummary(4)
	if g.Count != 3 || g.MaxLive != 3 {
		t.Errorf("count %d, at most %d at one instant; want 3 and 3", g.Count, g.MaxLive)
	}
	if want := []int{1, 3, 2, 1}; !slices.Equal(g.Live, want) {
		t.Errorf("alive by slice %v, want %v", g.Live, want)
	}
	if g.Lifetime.P50 != 100 || g.Lifetime.Max != 140 {
		t.Errorf("lifetime %+v", g.Lifetime)
	}
	// Apart: 0-10 and 20-30.
	p = &Profile{Root: &Node{}, Duration: 30, Starts: []int64{0, 20}, Lifetimes: []int64{10, 10}, Work: []int64{10, 10}}
	if g := p.GoroutineSummary(1); g.MaxLive != 1 || g.Live[0] != 2 {
		t.Errorf("apart: at most %d at one instant, %v by slice; want 1 and [2]", g.MaxLive, g.Live)
	}
	// Times out of the trace, as a damaged trace or a snapshot read at
	// the wrong clock rate had: counted at the trace's edges, no panic.
	p = &Profile{Root: &Node{}, Duration: 100, Starts: []int64{-40, 90, 20}, Lifetimes: []int64{10, 500, -30}, Work: []int64{10, 10, 10}}
	if g := p.GoroutineSummary(4); !slices.Equal(g.Live, []int{2, 0, 0, 1}) {
		t.Errorf("out of the trace: %v by slice, want [2 0 0 1]", g.Live)
	}
}

// TestGoroutinesFiltered: under a filter, the goroutines summarised are
// those that made calls it selects, over the time of those calls, and
// so are the chains that started them; main.main, begun before the
// window, started both.
func TestGoroutinesFiltered(t *testing.T) {
	const script = `
1 +main.main 0
2 go 1 main.main 5
2 +main.early 10
2 - 20
3 go 1 main.main 25
3 +main.late 30
3 +main.inner 35
3 - 40
3 - 50
1 - 100
`
	g := Analyze(build(t, script), Options{Filter: &filter.Filter{From: 25}}).GoroutineSummary(0)
	if g.Count != 1 || g.Lifetime.Max != 20 || g.Work.Max != 20 {
		t.Errorf("calls from 25ns: %d goroutines, lifetime %+v, work %+v; want 1, 20ns", g.Count, g.Lifetime, g.Work)
	}
	if len(g.Spawners) != 1 || g.Spawners[0].Goroutines != 1 {
		t.Errorf("calls from 25ns: started by %+v, want one goroutine", g.Spawners)
	}
	if g := Analyze(build(t, script), Options{}).GoroutineSummary(0); g.Count != 3 || len(g.Spawners) != 1 || g.Spawners[0].Goroutines != 2 {
		t.Errorf("every call: %d goroutines, started by %+v; want 3, 2 of them by main.main", g.Count, g.Spawners)
	}
}

// TestHeldUp: time a goroutine waited for the trace writer is left out
// of the calls it waited in (the caller of a call whose enter or exit
// waited; the call itself for a value), and said in the exit's Held.
func TestHeldUp(t *testing.T) {
	const script = `
1 +main 0
1 +a 10
1 - 20
1 held 20 50
1 +b 60
1 held 52 60
1 held 62 66
1 - 70
1 - 100
`
	r := build(t, script)
	held := map[string]int64{}
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if ev.Kind == tracefile.ExitEvent {
			held[r.Func(ev.Func).Name] = ev.Held
		}
	}
	if want := map[string]int64{"main": 42, "a": 0, "b": 4}; !maps.Equal(held, want) {
		t.Errorf("held %v, want %v", held, want)
	}
	p := Analyze(build(t, script), Options{})
	f := map[string]*Func{}
	for _, fn := range p.Funcs {
		f[fn.Name] = fn
	}
	if f["main"].Total != 58 || f["main"].Self != 42 || f["b"].Total != 6 || f["a"].Total != 10 {
		t.Errorf("main total %d self %d, a %d, b %d; want 58, 42, 10, 6", f["main"].Total, f["main"].Self, f["a"].Total, f["b"].Total)
	}
}

// TestSnapshotOpenCalls: in a flight recorder's snapshot, calls open
// when its window began count from the window's start, their enters
// keeping their true times: what they did before it, their callees, is
// not in the trace, and would otherwise be counted as their own time. A
// call ending before the window, which only a damaged snapshot holds,
// takes no time, not less.
func TestSnapshotOpenCalls(t *testing.T) {
	const script = `
meta mode flight
meta window_start_ns 1000
meta window_end_ns 5000
1 +main 0
1 +early 20
1 - 40
1 +serve 100
1 +work 1500
1 - 2500
1 held 2600 2700
1 - 4000
`
	r := build(t, script)
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		name := r.Func(ev.Func).Name
		if ev.Kind == tracefile.EnterEvent && name == "serve" && ev.Time != 100 {
			t.Errorf("serve entered at %d, want its true time 100", ev.Time)
		}
		if ev.Kind == tracefile.ExitEvent && (name == "main" || name == "serve") && ev.Start != 1000 {
			t.Errorf("%s's exit: start %d, want the window's start 1000", name, ev.Start)
		}
	}
	p := Analyze(build(t, script), Options{})
	f := map[string]*Func{}
	for _, fn := range p.Funcs {
		f[fn.Name] = fn
	}
	for _, c := range []struct {
		name        string
		total, self int64
	}{{"main", 2900, 0}, {"early", 0, 0}, {"serve", 2900, 1900}, {"work", 1000, 1000}} {
		if f[c.name].Total != c.total || f[c.name].Self != c.self {
			t.Errorf("%s: total %d, self %d; want %d, %d", c.name, f[c.name].Total, f[c.name].Self, c.total, c.self)
		}
	}
	// The goroutines alive, over the window.
	if g := p.GoroutineSummary(3); g.From != 1000 || g.Slice != 1000 || !slices.Equal(g.Live, []int{1, 1, 1}) {
		t.Errorf("goroutines alive from %v in slices of %v: %v; want from 1000ns, 1000ns, [1 1 1]", g.From, g.Slice, g.Live)
	}
}

// TestDeepRecursion has main call a and b in turn, each calling leaf
// first, far deeper than the chains whose callers are walked: a call is
// counted in its function's total only when no call of the same function
// is among its callers, at every depth.
func TestDeepRecursion(t *testing.T) {
	const depth = 3 * shallow
	var script strings.Builder
	at := 0
	tick := func() int { at += 10; return at }
	fmt.Fprintf(&script, "1 +main %d\n", tick())
	for i := 0; i < depth; i++ {
		fmt.Fprintf(&script, "1 +%s %d\n1 +leaf %d\n1 - %d\n", []string{"a", "b"}[i%2], tick(), tick(), tick())
	}
	for i := 0; i <= depth; i++ {
		fmt.Fprintf(&script, "1 - %d\n", tick())
	}
	p := Analyze(build(t, script.String()), Options{})
	if p.Err != nil {
		t.Fatal(p.Err)
	}
	got := funcsOf(p)
	// The first a began at 20, the first b at 50; both end with the
	// innermost calls unwound, main's exit last at at.
	if w := int64(at - 10 - 20); got["a"].Total != w || got["a"].Calls != depth/2 {
		t.Errorf("a: %+v, want %d calls, total %d (the outermost call's)", got["a"], depth/2, w)
	}
	if w := int64(at - 20 - 50); got["b"].Total != w {
		t.Errorf("b: total %d, want %d (the outermost call's)", got["b"].Total, w)
	}
	if got["leaf"].Total != 10*depth {
		t.Errorf("leaf: total %d, want %d: no call of it is inside another", got["leaf"].Total, 10*depth)
	}
}
