package web

import (
	"net/http"
	"slices"
	"sort"

	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/tracefile"
)

// Limits on a timeline request, so that no request costs much.
const (
	maxPixels = 20000   // width of the view in pixels
	maxLanes  = 400     // lanes in one response
	maxRows   = 48      // nesting levels drawn in a lane, as the page does
	maxItems  = 1 << 20 // bars in one response: past them, lanes are left out
)

type lanesJSON struct {
	G      []uint64 `json:"g"`
	Parent []uint64 `json:"parent"`
	Start  []uint32 `json:"start_func"` // function of the goroutine's first traced call
	Depth  []int    `json:"depth"`
	Calls  []int    `json:"calls"`
	End    int64    `json:"end_ns"` // the trace's end
	// First and Last are when the lanes' first call began and their
	// last ended: a request's calls are a sliver of a long trace.
	First int64 `json:"first_ns"`
	Last  int64 `json:"last_ns"`
}

// laneList answers /api/lanes: every goroutine of the timeline, in order
// of id, as parallel arrays (a trace can have 100,000 goroutines); with
// trace-id and span, the goroutines of the requests they select, with
// their calls alone.
func (s *Server) laneList(_ http.ResponseWriter, _ *http.Request, p *params) (any, error) {
	f := p.requests()
	if p.err != nil {
		return nil, nil
	}
	ix, err := s.indexFor(f)
	if err != nil {
		return nil, err
	}
	out := lanesJSON{End: int64(s.t.Profile.Duration), First: ix.first, Last: ix.last}
	for _, l := range ix.lanes {
		info := ix.gs[l.g]
		// The goroutine's longest outermost call says more than its
		// start function, runtime.main for goroutine 1, or its first
		// call, there a package's init.
		start := info.StartFunc
		if fn, ok := l.longestRoot(); ok {
			start = fn
		}
		out.G = append(out.G, l.g)
		out.Parent = append(out.Parent, info.Parent)
		out.Start = append(out.Start, start)
		out.Depth = append(out.Depth, l.maxDepth)
		out.Calls = append(out.Calls, l.len())
	}
	return out, nil
}

type laneJSON struct {
	G         uint64 `json:"g"`
	Parent    uint64 `json:"parent"`
	Creator   string `json:"creator,omitempty"`
	CreatorAt string `json:"creator_at,omitempty"`
	StartFunc string `json:"start_func,omitempty"`
	// StartedIn is the chain of the parent's calls running when this
	// goroutine was started, read from the parent's lane, recursion
	// folded.
	StartedIn   []query.Step   `json:"started_in,omitempty"`
	SpawnedFrom [][]query.Step `json:"spawned_from,omitempty"`
	Calls       int            `json:"calls"`
}

// laneInfo answers /api/lane?g=G: who started goroutine G, and from
// which chains of its parent; with trace-id and span, among the calls
// of the requests they select. The chains that started goroutines like
// it are the whole trace's.
func (s *Server) laneInfo(_ http.ResponseWriter, _ *http.Request, p *params) (any, error) {
	f := p.requests("g")
	g := uint64(p.int("g", 0, 1, 1<<62))
	if g == 0 {
		p.fail("g", "a goroutine id")
	}
	if p.err != nil {
		return nil, nil
	}
	t := s.t
	ix, err := s.indexFor(f)
	if err != nil {
		return nil, err
	}
	k, ok := ix.byG[g]
	if !ok {
		return nil, notFound("no goroutine with traced calls has that id")
	}
	l := ix.lanes[k]
	info := ix.gs[g]
	out := laneJSON{G: g, Parent: info.Parent, Calls: l.len()}
	if info.CreatorFunc != 0 {
		out.Creator = t.Profile.Name(info.CreatorFunc)
		out.CreatorAt = t.Location(info.CreatorFunc)
	}
	if info.StartFunc != 0 {
		out.StartFunc = t.Profile.Name(info.StartFunc)
	}
	if k, ok := ix.byG[info.Parent]; ok && l.len() > 0 {
		out.StartedIn = query.FoldPath(ix.lanes[k].chainAt(min(l.start[0], info.FirstSeen+1), info.CreatorFunc, t.Profile.Name))
	}
	// The goroutine's first chain knows the parent's chains that started
	// goroutines running it.
	if l.len() > 0 {
		for _, n := range t.Profile.Root.Children {
			if n.Func == l.fn[0] {
				out.SpawnedFrom = t.StartedBy(n, 5)
				break
			}
		}
	}
	return out, nil
}

type timelineJSON struct {
	From  int64           `json:"from_ns"`
	Lanes []laneItemsJSON `json:"lanes"`
	// Stride is how many numbers a bar takes in a lane's items.
	Stride int `json:"stride"`
	// Truncated says the lanes after the last one given were left out:
	// the response had maxItems bars already.
	Truncated bool `json:"truncated,omitempty"`
	// Errors are the errors the response's calls returned, by id: the
	// trace's table can hold a million messages, a response's bars name
	// at most a few.
	Errors map[uint32]tracefile.Error `json:"errors,omitempty"`
}

// itemLen is the numbers a bar takes in laneItemsJSON.
const itemLen = 9

// laneItemsJSON holds one lane's bars, nine numbers each: start (from
// the window's start), wall time, function id (0 for a block of several),
// depth, number of calls (more than 1 for a block), the call's index in
// its lane (-1 for a block), the function of the block's first call, the
// error the call returned (its id in Errors, 0 for none, negated for an
// end such as io.EOF, which is not a failure) or, for a block, how many
// of its calls failed, and the time the call was held up by the trace
// writer, which its duration everywhere else leaves out (0 for a block).
type laneItemsJSON struct {
	Lane  int     `json:"lane"`
	Items []int64 `json:"items"`
	// Values are the arguments and results recorded with --args of the
	// calls that have bars of their own, by the call's index in its lane
	// (a bar's sixth number). A block's calls are not looked at one by
	// one, and a million of them would not fit in a response.
	Values map[int]valuesJSON `json:"values,omitempty"`
}

// valuesJSON is a call's arguments and results, each as calltrail replay
// shows it: 42, "abc"…, len=3, *os.File, nil.
type valuesJSON struct {
	Args    []string `json:"args,omitempty"`
	Results []string `json:"results,omitempty"`
}

// formatValues formats the values of one call.
func formatValues(vs []callValue) valuesJSON {
	var out valuesJSON
	for _, v := range vs {
		if v.result {
			out.Results = append(out.Results, v.value().String())
		} else {
			out.Args = append(out.Args, v.value().String())
		}
	}
	return out
}

// timeline answers /api/timeline?from=NS&to=NS&px=WIDTH&l0=I&l1=J: the
// bars of lanes I to J (positions in /api/lanes) between the two times,
// calls narrower than a pixel merged; with trace-id and span, of the
// calls of the requests they select.
func (s *Server) timeline(_ http.ResponseWriter, r *http.Request, p *params) (any, error) {
	f := p.requests()
	end := int64(s.t.Profile.Duration) + 1
	from := p.int("from", 0, 0, 1<<62)
	to := p.int("to", end, 1, 1<<62)
	px := p.int("px", 1000, 1, maxPixels)
	l0 := int(p.int("l0", 0, 0, 1<<31))
	l1 := int(p.int("l1", int64(l0+maxLanes), 0, 1<<31))
	if p.err != nil {
		return nil, nil
	}
	if to <= from {
		return nil, badRequest("parameter to: want a time after from")
	}
	if l1 < l0 || l1-l0 > maxLanes {
		return nil, badRequest("parameters l0 and l1: want at most 400 lanes, l0 <= l1")
	}
	ix, err := s.indexFor(f)
	if err != nil {
		return nil, err
	}
	l1 = min(l1, len(ix.lanes))
	minDur := (to - from) / px
	out := timelineJSON{From: from, Lanes: []laneItemsJSON{}, Stride: itemLen}
	var items []item
	total := 0
	for k := l0; k < l1; k++ {
		if total >= maxItems {
			out.Truncated = true
			break
		}
		if err := r.Context().Err(); err != nil {
			return nil, err // the page gave up on this request
		}
		l := ix.lanes[k]
		items = l.window(from, to, minDur, maxRows, items[:0])
		total += len(items)
		li := laneItemsJSON{Lane: k, Items: make([]int64, 0, itemLen*len(items))}
		for _, it := range items {
			errs := int64(it.failed)
			if it.count == 1 {
				errs = int64(it.err)
				if it.err != 0 {
					out.addError(s.t, it.err)
					if it.failed == 0 {
						errs = -errs // an end, not a failure: not red
					}
				}
				if vs := l.valuesOf(it.call); vs != nil {
					if li.Values == nil {
						li.Values = map[int]valuesJSON{}
					}
					li.Values[it.call] = formatValues(vs)
				}
			}
			var held int64
			if it.count == 1 {
				held = l.heldFor(it.call)
			}
			li.Items = append(li.Items, it.start-from, it.dur, int64(it.fn), int64(it.depth), int64(it.count), int64(it.call), int64(it.first), errs, held)
		}
		out.Lanes = append(out.Lanes, li)
	}
	return out, nil
}

// addError names error id in the response, once however many of its
// bars returned it.
func (out *timelineJSON) addError(t *Trace, id uint32) {
	if out.Errors == nil {
		out.Errors = map[uint32]tracefile.Error{}
	}
	if _, ok := out.Errors[id]; !ok {
		out.Errors[id] = *t.callError(id)
	}
}

// chainAt returns the names of the calls running at time at, outermost
// first, down to the innermost call of function fn among them (or the
// innermost of all when none is of fn): where a go statement in fn ran.
func (l *lane) chainAt(at int64, fn uint32, name func(uint32) string) []string {
	i0 := sort.Search(l.len(), func(i int) bool { return l.start[i] >= at })
	var open []int // innermost first
	for c := i0 - 1; c >= 0; c = int(l.parent[c]) {
		if l.end(c) >= at {
			open = append(open, c)
		}
	}
	var callee []string
	if k := slices.IndexFunc(open, func(c int) bool { return l.fn[c] == fn }); k >= 0 {
		open = open[k:]
	} else if k, ok := l.madeCall(open, at, fn); ok {
		// The creator returned before the goroutine began: the call
		// of it an open call made started it, as the analysis finds.
		open, callee = open[k:], []string{name(fn)}
	}
	names := make([]string, len(open), len(open)+1)
	for k, c := range open {
		names[len(open)-1-k] = name(l.fn[c])
	}
	return append(names, callee...)
}

// madeCall returns the index in open (open calls, innermost first) of the
// innermost that made a call of fn before at, which has returned.
func (l *lane) madeCall(open []int, at int64, fn uint32) (int, bool) {
	budget := 1 << 20 // calls looked at: a loop's millions of callees
	for k, c := range open {
		for j := c + 1; j < l.len() && l.parent[j] == int32(c) && l.start[j] < at; j = int(l.next[j]) {
			if l.fn[j] == fn {
				return k, true
			}
			if budget--; budget == 0 {
				return 0, false
			}
		}
	}
	return 0, false
}
