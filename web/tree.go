package web

import (
	"net/http"
	"time"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/query"
)

// treeLimit is how many rows one call tree response holds; the page asks
// for more with the cursor it gets.
const treeLimit = 500

type treeRowJSON struct {
	Call  int    `json:"call"` // index in the goroutine's lane
	Func  uint32 `json:"func"`
	Start int64  `json:"start_ns"`
	Dur   int64  `json:"dur_ns"`
	Exit  string `json:"exit,omitempty"`
	Kids  bool   `json:"kids"` // it has callees, maybe not shown
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
// filters (g, F, N, D, t, window):
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
	ix := s.t.ix
	out := treeJSON{More: -1}
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
	out.More = w.children(max(lo, after), hi, focus, func(c int) bool {
		if len(out.Rows) == treeLimit {
			return false
		}
		out.Rows = append(out.Rows, treeRowJSON{c, l.fn[c], l.start[c], l.dur[c], query.ExitName(l.exit[c]), l.next[c] > int32(c+1)})
		return true
	})
	return out, nil
}

// treeWalk applies a filter to the calls of one lane: the same rules as
// filter.Tracker, on the index rather than on a stream of events.
type treeWalk struct {
	l     *lane
	f     *filter.Filter
	class []uint8 // by function id: 1 focus, 2 hide, 3 both, 0 neither
}

func (s *Server) newTreeWalk(l *lane, f *filter.Filter) *treeWalk {
	w := &treeWalk{l: l, f: f, class: make([]uint8, len(s.t.Names()))}
	for id, name := range s.t.Names() {
		if f.Focus != nil && f.Focus.MatchString(name) {
			w.class[id] |= 1
		}
		if f.Hide != nil && f.Hide.MatchString(name) {
			w.class[id] |= 2
		}
	}
	return w
}

func (w *treeWalk) cls(c int) uint8 {
	if fn := int(w.l.fn[c]); fn < len(w.class) {
		return w.class[fn]
	}
	return 0
}

// focusDepth returns the depth of the outermost focused call among c and
// its callers (0 without a focus), or -1 if c is hidden or unfocused.
func (w *treeWalk) focusDepth(c int) int {
	focus := -1
	if w.f.Focus == nil {
		focus = 0
	}
	for a := c; a >= 0; a = int(w.l.parent[a]) {
		k := w.cls(a)
		if k&2 != 0 {
			return -1
		}
		if k&1 != 0 {
			focus = int(w.l.depth[a])
		}
	}
	return focus
}

// children visits, from index lo up to hi, the shown calls whose nearest
// shown caller is outside [lo, hi): within a focused call of depth focus
// (0 when not yet focused, or with no focus). It stops when visit returns
// false, returning the index to continue from, or -1 when done.
func (w *treeWalk) children(lo, hi, focus int, visit func(c int) bool) int {
	l, f := w.l, w.f
	for c := lo; c < hi; {
		if l.start[c] >= int64(f.To) && f.To != 0 {
			return -1 // later calls begin later still
		}
		k := w.cls(c)
		skip := int(l.next[c])
		switch {
		case k&2 != 0, time.Duration(l.dur[c]) < f.MinTime:
			c = skip // hidden with its callees (which are shorter still)
			continue
		case l.end(c) < int64(f.From):
			c = skip
			continue
		}
		fd := focus
		if f.Focus != nil && fd == 0 {
			if k&1 == 0 {
				c++ // not focused yet: look among its callees
				continue
			}
			fd = int(l.depth[c])
		}
		depth := int(l.depth[c])
		if fd > 0 {
			depth = depth - fd + 1
		}
		if f.MaxDepth > 0 && depth > f.MaxDepth {
			c = skip
			continue
		}
		if !f.InWindow(l.start[c]) {
			c++ // outside the window: its callees may be inside
			continue
		}
		if !visit(c) {
			return c
		}
		c = skip
	}
	return -1
}
