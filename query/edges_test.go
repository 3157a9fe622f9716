package query

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/tracefile"
)

// randomTraces loads the random traces of seeds 0 to n-1.
func randomTraces(t *testing.T, n uint64) []*Trace {
	var traces []*Trace
	for seed := range n {
		data, _, err := tracetest.Random(seed)
		traces = append(traces, load(t, data, err))
	}
	return traces
}

// TestEdgesAsWalked compares each function's callers and callees, taken
// from the table one walk of the tree makes for all of them, with a walk
// of the whole tree for that function alone, as function pages once
// made: over random traces, deep recursion, and functions of one name.
func TestEdgesAsWalked(t *testing.T) {
	traces := randomTraces(t, 60)
	traces = append(traces, load(t, tracetest.Recursion(300), nil))
	// Recursion through an edge, and calls that never ended (goroutine
	// 3's), which are callers but no callees.
	traces = append(traces, script(t, `1 +main.a 0
1 +main.b 1
1 +main.a 2
1 +main.b 3
1 - 4
1 - 5
1 +main.c 6
1 - 7
1 - 8
1 - 9
2 +main.b 10
2 +main.a 11
2 +main.b 12
2 - 13
2 - 14
3 +main.a 15
3 +main.c 16
`))
	// Calls left out by a filter: chains of no calls, no callees.
	for _, seed := range []uint64{1, 2, 3} {
		data, _, err := tracetest.Random(seed)
		if err != nil {
			t.Fatal(err)
		}
		r, err := tracefile.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		traces = append(traces, New("filtered", analysis.Analyze(r, analysis.Options{Filter: &filter.Filter{MinTime: 50}})))
	}
	for i, tr := range traces {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for id := range tr.Profile.Funcs {
				in, out := tr.edges(id)
				wantIn, wantOut := walkEdges(tr, id)
				if !reflect.DeepEqual(in, wantIn) || !reflect.DeepEqual(out, wantOut) {
					t.Errorf("%s: callers %v, callees %v; walked: %v, %v", tr.Profile.Name(id), in, out, wantIn, wantOut)
				}
			}
		})
	}
}

// walkEdges is what edges gave before its table: a walk of the whole
// tree for the one function id.
func walkEdges(t *Trace, id uint32) (callers, callees []Edge) {
	in, out := map[uint32]*Edge{}, map[uint32]*Edge{}
	add := func(m map[uint32]*Edge, fn uint32, c *analysis.Node, outer bool) {
		e := m[fn]
		if e == nil {
			e = &Edge{Name: StartEdge}
			if fn != 0 {
				e.Name = t.Profile.Name(fn)
			}
			m[fn] = e
		}
		e.Calls += c.Calls
		if outer {
			e.TotalNs += c.Total
		}
	}
	open := map[edgeKey]int{}
	type frame struct {
		n    *analysis.Node
		next int
	}
	stack := []frame{{t.Profile.Root, 0}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		n := top.n
		caller := uint32(0)
		if n != t.Profile.Root {
			caller = n.Func
		}
		if top.next == len(n.Children) {
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				k := edgeKey{0, n.Func}
				if p := stack[len(stack)-1].n; p != t.Profile.Root {
					k.caller = p.Func
				}
				if k.caller == id || k.callee == id {
					open[k]--
				}
			}
			continue
		}
		c := n.Children[top.next]
		top.next++
		if c.Func != id && caller != id {
			stack = append(stack, frame{c, 0})
			continue
		}
		k := edgeKey{caller, c.Func}
		outer := open[k] == 0
		if c.Func == id {
			add(in, caller, c, outer)
		}
		if caller == id && c.Calls > 0 {
			add(out, c.Func, c, outer)
		}
		open[k]++
		stack = append(stack, frame{c, 0})
	}
	list := func(m map[uint32]*Edge) []Edge {
		out := make([]Edge, 0, len(m))
		for _, e := range m {
			out = append(out, *e)
		}
		return sortEdges(out)
	}
	return list(in), list(out)
}

// TestChainTailAsFolded: the chain a finding names, folded from its
// node's path alone, is the chain the folding of every chain gives that
// node, and one Chains lists for its function, over random traces, deep
// recursion and mutual recursion.
func TestChainTailAsFolded(t *testing.T) {
	traces := randomTraces(t, 60)
	traces = append(traces, load(t, tracetest.Recursion(300), nil))
	traces = append(traces, script(t, `1 +main.a 0
1 +main.b 1
1 +main.a 2
1 +main.b 3
1 +main.a 4
1 +main.c 5
1 - 6
1 - 7
1 - 8
1 - 9
1 - 10
1 - 11
`))
	checked := 0
	for i, tr := range traces {
		f := tr.fold()
		listed := map[string]bool{}
		for id := range tr.Profile.Funcs {
			chains, _ := tr.Chains([]uint32{id}, 0)
			for _, c := range chains {
				listed[Key(c.Path)] = true
			}
		}
		// The folding's own walk, again: pushing what it pushed finds
		// the states it made.
		type frame struct {
			n *analysis.Node
			s *fstate
		}
		stack := []frame{{tr.Profile.Root, f.folder.root}}
		for len(stack) > 0 {
			fr := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, c := range fr.n.Children {
				s := f.push(fr.s, c.Func)
				stack = append(stack, frame{c, s})
				steps := f.steps(s, true)
				want := Text(steps, " -> ")
				if len(steps) > 4 {
					want = "… -> " + Text(steps[len(steps)-4:], " -> ")
				}
				if got := tr.chainTail(c); got != want {
					t.Errorf("trace %d: chainTail = %q, the folding gives %q", i, got, want)
				}
				if k := Key(tr.Steps(c)); c.Calls > 0 && !listed[k] {
					t.Errorf("trace %d: Steps = %s, which Chains does not list", i, k)
				}
				checked++
			}
		}
	}
	if checked < 1000 {
		t.Errorf("only %d chains checked", checked)
	}
}

// TestInvertedAsWalked compares the inverted flame graph, whose paths are
// each found from the caller's, with one that walks each chain's path up
// from its innermost call, box by box: over random traces (recursion,
// goroutines, errors), recursion deeper than InvertedDepth, and a mutual
// recursion that deep whose calls fail and whose outer calls have no
// self time.
func TestInvertedAsWalked(t *testing.T) {
	traces := randomTraces(t, 60)
	traces = append(traces, load(t, tracetest.Recursion(InvertedDepth+50), nil))
	var s strings.Builder
	const depth = InvertedDepth + 60
	at := 0
	for i := range depth {
		fmt.Fprintf(&s, "1 +main.%c %d\n", "ab"[i%2], at)
		if i >= depth/2 {
			at++
		}
	}
	for i := range depth {
		if i%3 == 0 {
			fmt.Fprintf(&s, "1 -boom %d\n", at)
		} else {
			fmt.Fprintf(&s, "1 - %d\n", at)
		}
		if i < depth/2 {
			at += 5
		}
	}
	traces = append(traces, script(t, s.String()))
	for i, tr := range traces {
		paths := map[pathKey]int{}
		got, want := boxes(FlameGraph(tr.Profile, true, Wall), paths), boxes(invertedByWalking(tr.Profile, Wall), paths)
		if !slices.Equal(got, want) {
			t.Errorf("trace %d: the inverted graph has %d boxes, walking each path %d; first differing: %v", i, len(got), len(want), firstDiff(got, want))
		}
	}
}

// boxes lists a tree's boxes, each as its path and figures, sorted. A
// path is a number, the same in every tree boxes lists with the same
// paths map: writing out each box's path would take a deep tree's
// depth per box.
func boxes(t *Tree, paths map[pathKey]int) []string {
	ids := make([]int, t.Len())
	var out []string
	for i := 1; i < t.Len(); i++ { // parents come before their children
		k := pathKey{ids[t.Parent[i]], t.Names[t.Name[i]]}
		id, ok := paths[k]
		if !ok {
			id = len(paths) + 1
			paths[k] = id
		}
		ids[i] = id
	}
	for i := range t.Len() {
		line := fmt.Sprintf("%d %d %d", ids[i], t.Value[i], t.Calls[i])
		if t.Errors != nil {
			line += fmt.Sprintf(" %d %d", t.Errors[i], t.ErrorCalls[i])
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}

type pathKey struct {
	parent int
	name   string
}

func firstDiff(a, b []string) [2]string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return [2]string{a[i], b[i]}
		}
	}
	return [2]string{}
}

// invertedByWalking is the inverted flame graph made the plain way: for
// each chain with self time, a walk up its path from its innermost call.
func invertedByWalking(p *analysis.Profile, w Weight) *Tree {
	b := newBuilder()
	t := b.t
	if failedCalls(p) > 0 {
		t.Errors, t.ErrorCalls = []uint64{0}, []uint64{0}
	}
	p.Walk(func(n *analysis.Node) {
		v := w.self(n)
		if n == p.Root || v <= 0 {
			return
		}
		t.Value[0] += v
		k := int32(0)
		d := 0
		for a := n; a != nil && a.Parent != nil && d < InvertedDepth; a, d = a.Parent, d+1 {
			k = b.child(k, b.funcName(p, a.Func))
			t.Value[k] += v
			if a == n {
				t.Calls[k] += a.Calls
			}
			if t.Errors != nil {
				t.Errors[k] += n.Errors
				t.ErrorCalls[k] += n.Calls
			}
		}
	})
	return b.done()
}
