package tracetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Random makes a well-formed trace from seed, of the shapes that make
// answers hard: functions recursing directly and through cycles of two
// and three, goroutines started from deep in others' calls, calls ending
// in errors (io.EOF among them) and panics, time in each call's own code
// between its callees, waits for the trace writer, and clocks that step
// back a little. Its script is returned with it, for a test
// that fails to show.
func Random(seed uint64) ([]byte, string, error) {
	script, _ := randomScript(seed)
	data, err := Build(script)
	return data, script, err
}

// RandomSnapshot makes what a flight recorder's snapshot of Random(seed)'s
// program would hold, its window starting a quarter, a half or three
// quarters of the way through: the calls open at the window's start,
// with their true start times, and every call after it.
func RandomSnapshot(seed uint64) ([]byte, string, error) {
	script, end := randomScript(seed)
	script = snapshotOf(script, end*int64(1+seed%3)/4, end)
	data, err := Build(script)
	return data, script, err
}

// randomScript returns Random's script and its last time.
func randomScript(seed uint64) (string, int64) {
	g := &randomTrace{r: rand.New(rand.NewPCG(seed, seed>>32^0x9e3779b9)), next: 2}
	g.calls(1, "main.main", 0)
	for len(g.pending) > 0 {
		p := g.pending[0]
		g.pending = g.pending[1:]
		g.t += 1 + g.r.Int64N(50)
		fmt.Fprintf(&g.b, "%d go %d %s %d\n", p.g, p.parent, p.creator, g.t)
		g.calls(p.g, g.fn(), 0)
	}
	return g.b.String(), g.t
}

// snapshotOf keeps of a script what a snapshot of the window from start
// to end holds: the calls that end after start, with the waits and
// goroutine records of their time.
func snapshotOf(script string, start, end int64) string {
	lines := strings.Split(strings.TrimSpace(script), "\n")
	ends := make([]int64, len(lines)) // of each enter line, its call's end
	enterOf := make([]int, len(lines))
	open := map[string][]int{}
	for i, line := range lines {
		f := strings.Fields(line)
		t, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
		enterOf[i] = -1
		switch {
		case strings.HasPrefix(f[1], "+"):
			open[f[0]] = append(open[f[0]], i)
			ends[i] = math.MaxInt64 // unless its exit comes
		case strings.HasPrefix(f[1], "-"), f[1] == "!":
			st := open[f[0]]
			enterOf[i], open[f[0]] = st[len(st)-1], st[:len(st)-1]
			ends[enterOf[i]] = t
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "meta mode flight\nmeta window_start_ns %d\nmeta window_end_ns %d\n", start, end)
	for i, line := range lines {
		f := strings.Fields(line)
		keep := true
		switch {
		case strings.HasPrefix(f[1], "+"):
			keep = ends[i] > start
		case enterOf[i] >= 0:
			keep = ends[enterOf[i]] > start
		case f[1] == "held":
			from, _ := strconv.ParseInt(f[2], 10, 64)
			keep = from >= start
		}
		if keep {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

type randomTrace struct {
	r       *rand.Rand
	b       strings.Builder
	t       int64
	next    uint64 // the next goroutine's id
	pending []spawn
	budget  int // calls made
}

type spawn struct {
	g, parent uint64
	creator   string
}

// funcs are the functions calls pick from: cycles of one, two and three,
// and functions that recurse not at all.
var funcs = []string{"main.rec", "main.even", "main.odd", "main.a", "main.b", "main.c", "main.leaf", "main.read", "main.work"}

// callee picks the function fn calls: most often the next of its cycle.
func (g *randomTrace) callee(fn string) string {
	cycle := map[string]string{"main.rec": "main.rec", "main.even": "main.odd", "main.odd": "main.even", "main.a": "main.b", "main.b": "main.c", "main.c": "main.a"}
	if next, ok := cycle[fn]; ok && g.r.IntN(3) > 0 {
		return next
	}
	return g.fn()
}

func (g *randomTrace) fn() string { return funcs[g.r.IntN(len(funcs))] }

// calls writes a call of fn in goroutine id, at depth, and its callees.
func (g *randomTrace) calls(id uint64, fn string, depth int) {
	g.budget++
	g.t += 1 + g.r.Int64N(100)
	fmt.Fprintf(&g.b, "%d +%s %d\n", id, fn, g.at())
	if depth < 14 && g.budget < 3000 {
		for n := g.r.IntN(3 + max(0, 2-depth)); n > 0; n-- {
			if g.r.IntN(12) == 0 && g.next < 12 {
				g.pending = append(g.pending, spawn{g.next, id, fn})
				g.next++
			}
			g.calls(id, g.callee(fn), depth+1)
			g.t += g.r.Int64N(100)
			if g.r.IntN(25) == 0 {
				// The callee's exit waited for the trace writer.
				from := g.t
				g.t += 1 + g.r.Int64N(300)
				fmt.Fprintf(&g.b, "%d held %d %d\n", id, from, g.t)
			}
		}
	}
	g.t += 1 + g.r.Int64N(100)
	switch g.r.IntN(16) {
	case 0:
		fmt.Fprintf(&g.b, "%d -EOF %d\n", id, g.at())
	case 1:
		fmt.Fprintf(&g.b, "%d -boom %d\n", id, g.at())
	case 2:
		fmt.Fprintf(&g.b, "%d ! %d\n", id, g.at())
	default:
		fmt.Fprintf(&g.b, "%d - %d\n", id, g.at())
	}
}

// at is the time an event is written with: now, or, one time in twenty,
// up to 150 ns earlier, as a goroutine that moved to a CPU whose clock is
// behind sees it.
func (g *randomTrace) at() int64 {
	if g.r.IntN(20) == 0 {
		return max(g.t-g.r.Int64N(150), 0)
	}
	return g.t
}
