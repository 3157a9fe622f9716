package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/tracefile"
)

// treeLimit is how many rows one call tree response holds; the page asks
// for more with the cursor it gets. Tests page through small trees with
// a smaller one.
var treeLimit = 500

type treeRowJSON struct {
	Call       int              `json:"call"` // index in the goroutine's lane
	Func       uint32           `json:"func"`
	Start      int64            `json:"start_ns"`
	Dur        int64            `json:"duration_ns"`       // less Held, as every duration
	Held       int64            `json:"held_ns,omitempty"` // time held up by the trace writer
	Exit       string           `json:"exit,omitempty"`
	Error      *tracefile.Error `json:"error,omitempty"` // the error it returned
	Kids       bool             `json:"kids"`            // it has callees, maybe not shown
	valuesJSON                  // its arguments and results, if recorded
}

type goroutineRowJSON struct {
	G      uint64 `json:"g"`
	Parent uint64 `json:"parent"`
	Calls  int    `json:"calls"`
}

type treeJSON struct {
	Goroutines []goroutineRowJSON `json:"goroutines,omitempty"`
	Rows       []treeRowJSON      `json:"rows,omitempty"`
	More       int                `json:"more"` // cursor for the next rows, -1 at the end
}

// tree answers the call tree view, lazily, with the command line's
// filters (g, F, N, D, t, window, and trace-id and span, which choose
// the calls of some requests, as the command line's do):
//
//   - without "in": the goroutines, from cursor "after";
//   - with in=G: the shown outermost calls of goroutine G;
//   - with in=G and call=I: the shown calls under call I of G.
//
// A call the filters leave out is passed through: its shown callees
// appear in its place, as in calltrail replay.
func (s *Server) tree(_ http.ResponseWriter, _ *http.Request, p *params) (any, error) {
	f := p.filter()
	in := uint64(p.int("in", 0, 0, 1<<62))
	call := int(p.int("call", -1, -1, 1<<31))
	after := int(p.int("after", 0, 0, 1<<31))
	if p.err != nil {
		return nil, nil
	}
	ix, err := s.indexFor(f)
	if err != nil {
		return nil, err
	}
	out := treeJSON{More: -1}
	if _, ok := ix.byG[f.G]; f.G != 0 && !ok {
		// As -g on the command line: an empty list would read as a
		// goroutine whose calls the other filters all left out.
		return nil, notFound(fmt.Sprintf("g %d: no traced call ran in goroutine %d", f.G, f.G))
	}
	if in == 0 {
		for k := after; k < len(ix.lanes); k++ {
			l := ix.lanes[k]
			if !f.Goroutine(l.g) {
				continue
			}
			if len(out.Goroutines) == treeLimit {
				out.More = k
				break
			}
			out.Goroutines = append(out.Goroutines, goroutineRowJSON{l.g, ix.gs[l.g].Parent, l.len()})
		}
		return out, nil
	}
	k, ok := ix.byG[in]
	if !ok || !f.Goroutine(in) {
		return nil, notFound("no goroutine with traced calls has that id")
	}
	l := ix.lanes[k]
	if call >= l.len() {
		return nil, notFound("no such call")
	}
	w := s.newTreeWalk(l, f)
	lo, hi, focus := 0, l.len(), 0
	if call >= 0 {
		lo, hi = call+1, int(l.next[call])
		focus = w.focusDepth(call)
		if focus < 0 {
			return nil, notFound("that call is not shown by these filters")
		}
	}
	out.Rows = []treeRowJSON{}
	out.More = w.children(lo, hi, after, focus, func(c int) bool {
		if len(out.Rows) == treeLimit {
			return false
		}
		held := l.heldFor(c)
		out.Rows = append(out.Rows, treeRowJSON{c, l.fn[c], l.start[c], l.dur[c] - held, held, query.ExitName(l.exit[c]), s.t.callError(l.errAt(c)), l.next[c] > int32(c+1), formatValues(l.valuesOf(c))})
		return true
	})
	return out, nil
}

// treeWalk applies a filter to the calls of one lane: filter.Decide's
// rules, on the index rather than on a stream of events.
type treeWalk struct {
	l     *lane
	f     *filter.Filter
	class []filter.Class // by function id
}

func (s *Server) newTreeWalk(l *lane, f *filter.Filter) *treeWalk {
	w := &treeWalk{l: l, f: f, class: make([]filter.Class, len(s.t.Names()))}
	if f.Focus != nil || f.Hide != nil {
		for id, name := range s.t.Names() {
			w.class[id] = f.Class(name)
		}
	}
	return w
}

func (w *treeWalk) cls(c int) filter.Class {
	if fn := int(w.l.fn[c]); fn < len(w.class) {
		return w.class[fn]
	}
	return 0
}

// focusDepth returns the focus that call c's callees are under (0 without
// a focus), or -1 if c is not shown.
func (w *treeWalk) focusDepth(c int) int {
	var chain []int
	for a := c; a >= 0; a = int(w.l.parent[a]) {
		chain = append(chain, a)
	}
	focus := 0
	for i := len(chain) - 1; i >= 0; i-- {
		a := chain[i]
		v, _, f := w.f.Decide(w.cls(a), int(w.l.depth[a]), focus)
		if v == filter.Prune || a == c && v != filter.Show {
			return -1
		}
		focus = f
	}
	return focus
}

// children visits, from index lo up to hi, the shown calls whose nearest
// shown caller is outside [lo, hi): callees of a call whose own callees
// are under focus. It starts at after, if later than lo. It stops when
// visit returns false, returning the index to continue from, or -1 when
// done.
//
// A call not shown, whose callees may be (not focused yet, or outside
// the window), is looked into; the focus within it is what Decide says,
// as for a stream of events: a window does not move the focus.
func (w *treeWalk) children(lo, hi, after, focus int, visit func(c int) bool) int {
	l, f := w.l, w.f
	type within struct{ end, outer int } // a call looked into
	var stack []within
	into := func(c int) {
		_, _, inner := f.Decide(w.cls(c), int(l.depth[c]), focus)
		stack = append(stack, within{int(l.next[c]), focus})
		focus = inner
	}
	c := lo
	if after > lo {
		// Resume inside the calls looked into on the way to after.
		var path []int
		for a := int(l.parent[after]); a >= lo; a = int(l.parent[a]) {
			path = append(path, a)
		}
		for i := len(path) - 1; i >= 0; i-- {
			into(path[i])
		}
		c = after
	}
	for c < hi {
		for n := len(stack); n > 0 && c >= stack[n-1].end; n-- {
			focus = stack[n-1].outer
			stack = stack[:n-1]
		}
		if l.start[c] >= int64(f.To) && f.To != 0 {
			return -1 // later calls begin later still
		}
		skip := int(l.next[c])
		if time.Duration(l.dur[c]) < f.MinTime || l.end(c) < int64(f.From) {
			c = skip // callees are shorter still, or end earlier
			continue
		}
		switch v, _, _ := f.Decide(w.cls(c), int(l.depth[c]), focus); {
		case v == filter.Prune:
			c = skip
			continue
		case v == filter.Pass, !f.InWindow(l.start[c]):
			into(c)
			c++
			continue
		}
		if !visit(c) {
			return c
		}
		c = skip
	}
	return -1
}
