package web

import (
	"bytes"
	"cmp"
	"errors"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/spans"
	"github.com/calltrail/calltrail/tracefile"
)

// requests is what a trace with OpenTelemetry spans keeps beside its
// timeline index: its spans, with what their calls did, for the Requests
// view; and the trace's bytes, from which a view narrowed to some
// requests analyses their calls as the command line does, on a reader
// told which spans to keep. A trace without spans has none, and costs
// no more to load than before spans were recorded.
type requests struct {
	index   *spans.Index
	slowest []*spans.Span // index.Spans, longest first
	name    string
	data    []byte
	calls   int // in the trace's index

	mu     sync.Mutex
	chosen []*selection // the selections asked for lately, the latest first
	// analyses bounds the analyses under way: each reads the whole
	// trace, and parameters are the client's to choose.
	analyses chan struct{}
}

// Bounds on what the selections keep: at most maxSelections of them, and,
// past the latest, no more calls in all than the trace's own index holds.
const (
	maxSelections = 8
	maxAnalyses   = 2
)

// loadRequests reads the spans of the trace in data, whose index ix
// found some, and what their calls did. It gives ix's calls the spans
// their goroutines were started under, which only a pass over the whole
// trace can tell, and which ix was made without.
func loadRequests(name string, data []byte, ix *index, fname func(uint32) string) *requests {
	r, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil // the header read fine before
	}
	// A pass that stops early keeps what it read, as the index did, and
	// the trace's warning says why.
	sx, _ := spans.Read(r)
	r, _ = tracefile.NewReader(bytes.NewReader(data))
	sx.Count(r, fname)
	ix.inherit(sx.Inherit)
	return &requests{index: sx, slowest: sx.Slowest(), name: name, data: data, calls: ix.calls, analyses: make(chan struct{}, maxAnalyses)}
}

// inherit gives the calls that ran under no span of their goroutine's
// own the span the goroutine was started under (by goroutine), as
// tracefile.Reader.InheritSpans has a reader do: then each call's span
// is the one the command line's second pass gives it.
func (ix *index) inherit(by map[uint64]tracefile.SpanID) {
	for _, l := range ix.lanes {
		id, ok := by[l.g]
		if !ok || !id.IsValid() {
			continue
		}
		slot := ix.slot(id)
		for i := range l.len() {
			if l.spanAt(i) == 0 {
				l.setSpan(i, slot)
			}
		}
	}
	ix.slotOf = nil // the index is made: its map can go
}

// narrow returns the index of the calls whose span keep holds, by slot:
// the calls a reader told tracefile.Reader.KeepSpans gives, with their
// depths counting the calls kept, a call whose caller is left out
// outermost.
func (ix *index) narrow(keep []bool) *index {
	out := &index{byG: map[uint64]int{}, gs: ix.gs, spans: ix.spans, hasSpans: ix.hasSpans}
	for _, l := range ix.lanes {
		if l.span == nil && !keep[0] {
			continue // a lane of calls under no span
		}
		if nl := l.narrow(keep); nl != nil {
			out.byG[l.g] = len(out.lanes)
			out.lanes = append(out.lanes, nl)
			out.calls += nl.len()
		}
	}
	out.measure()
	return out
}

// narrow returns the lane of l's calls whose span keep holds, nil for
// none.
func (l *lane) narrow(keep []bool) *lane {
	n := 0
	for i := range l.len() {
		if keep[l.spanAt(i)] {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	nl := &lane{g: l.g}
	nl.resize(n)
	if l.err != nil {
		nl.err = make([]uint32, 0, n)
	}
	if l.span != nil {
		nl.span = make([]int32, 0, n)
	}
	type open struct{ end, at int32 } // a kept call: its subtree's end in l, its index in nl
	var stack []open
	close := func(to int) { // ends the kept calls whose subtree ends by to
		for len(stack) > 0 && int(stack[len(stack)-1].end) <= to {
			nl.next[stack[len(stack)-1].at] = int32(nl.len())
			stack = stack[:len(stack)-1]
		}
	}
	failed, vals := l.failed, l.vals // both in order of call
	for i := range l.len() {
		close(i)
		if !keep[l.spanAt(i)] {
			continue
		}
		j := int32(nl.len())
		parent := int32(-1)
		if len(stack) > 0 {
			parent = stack[len(stack)-1].at
		}
		d := len(stack) + 1
		nl.start = append(nl.start, l.start[i])
		nl.dur = append(nl.dur, l.dur[i])
		nl.fn = append(nl.fn, l.fn[i])
		nl.parent = append(nl.parent, parent)
		nl.next = append(nl.next, j+1)
		nl.depth = append(nl.depth, uint16(min(d, 1<<16-1)))
		nl.exit = append(nl.exit, l.exit[i])
		if l.err != nil {
			nl.err = append(nl.err, l.err[i])
		}
		if l.span != nil {
			nl.span = append(nl.span, l.span[i])
		}
		nl.maxDepth = max(nl.maxDepth, d)
		if h, ok := l.held[int32(i)]; ok {
			if nl.held == nil {
				nl.held = map[int32]int64{}
			}
			nl.held[j] = h
		}
		for len(failed) > 0 && int(failed[0]) < i {
			failed = failed[1:]
		}
		if len(failed) > 0 && int(failed[0]) == i {
			nl.failed = append(nl.failed, j)
		}
		for len(vals) > 0 && int(vals[0].call) < i {
			vals = vals[1:]
		}
		for len(vals) > 0 && int(vals[0].call) == i {
			v := vals[0]
			v.call = j
			nl.vals = append(nl.vals, v)
			vals = vals[1:]
		}
		stack = append(stack, open{l.next[i], j})
	}
	close(l.len())
	return nl
}

// A selection is the calls of the requests that one pair of trace-id and
// span parameters selects: their timeline index, made from the trace's
// at once, and their analysis, made when a view first needs it.
type selection struct {
	key  string
	keep func(tracefile.SpanID) bool
	ix   *index

	once sync.Once
	a    *analysed
	err  error
}

// selected returns the selection f's trace-id and span make, nil when
// they are not set: for a view of the calls of some requests, as the
// command line's --trace-id and --span make. Naming no span of the trace
// is a 404, in the command line's words.
func (s *Server) selected(f *filter.Filter) (*selection, error) {
	if !f.Requests() {
		return nil, nil
	}
	rq := s.t.req
	if rq == nil {
		_, err := (&spans.Index{}).Select(f.TraceID, f.Span)
		return nil, notFound(err.Error())
	}
	return rq.selection(s.t.ix, f)
}

func (rq *requests) selection(ix *index, f *filter.Filter) (*selection, error) {
	key := f.TraceID + "\x00"
	if f.Span != nil {
		key += f.Span.String()
	}
	if sel := rq.recall(key, nil); sel != nil {
		return sel, nil
	}
	keep, err := rq.index.Select(f.TraceID, f.Span)
	if err != nil {
		return nil, notFound(err.Error())
	}
	// The rule is the reader's, asked once a span rather than once a
	// call; slot 0 too, the calls of no span, which a hostile trace's
	// span of id 0 may claim.
	slots := make([]bool, max(len(ix.spans), 1))
	slots[0] = keep(tracefile.SpanID{})
	for i := 1; i < len(ix.spans); i++ {
		slots[i] = keep(ix.spans[i])
	}
	return rq.recall(key, &selection{key: key, keep: keep, ix: ix.narrow(slots)}), nil
}

// recall returns the selection of key, moved to the front of those kept,
// or if there is none, made, kept first. Those past the bounds are let
// go.
func (rq *requests) recall(key string, made *selection) *selection {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	for i, sel := range rq.chosen {
		if sel.key == key {
			// Made twice at once, the first is kept: its analysis
			// may have begun.
			copy(rq.chosen[1:i+1], rq.chosen[:i])
			rq.chosen[0] = sel
			return sel
		}
	}
	if made == nil {
		return nil
	}
	rq.chosen = slices.Insert(rq.chosen, 0, made)
	calls := 0
	for i, sel := range rq.chosen[1:] {
		if calls += sel.ix.calls; i+1 >= maxSelections || calls > rq.calls {
			rq.chosen = rq.chosen[:i+1]
			break
		}
	}
	return made
}

// analysis returns the analysis of the selection's calls, made the first
// time it is asked for: a pass over the whole trace, as calltrail report
// --trace-id makes.
func (sel *selection) analysis(rq *requests) (*analysed, error) {
	sel.once.Do(func() {
		sel.err = errors.New("internal error analysing the requests' calls") // unless it ends well
		rq.analyses <- struct{}{}
		defer func() { <-rq.analyses }()
		began := time.Now()
		r, err := tracefile.NewReader(bytes.NewReader(rq.data))
		if err != nil {
			sel.err = err
			return
		}
		r.InheritSpans(rq.index.Inherit)
		r.KeepSpans(sel.keep)
		p := analysis.Analyze(r, analysis.Options{Slowest: slowest})
		sel.a, sel.err = &analysed{Trace: query.New(rq.name, p), took: time.Since(began)}, nil
	})
	return sel.a, sel.err
}

// indexFor returns the calls the timeline and the call tree show for
// filter f: the trace's, or those of the requests f selects.
func (s *Server) indexFor(f *filter.Filter) (*index, error) {
	sel, err := s.selected(f)
	switch {
	case err != nil:
		return nil, err
	case sel == nil:
		return s.t.ix, nil
	}
	return sel.ix, nil
}

// analysisFor returns the analysis the overview, the flame graph and the
// function view show for filter f: the trace's, or that of the calls of
// the requests f selects; and the timeline index of those calls.
func (s *Server) analysisFor(f *filter.Filter) (*analysed, *index, error) {
	sel, err := s.selected(f)
	if err != nil {
		return nil, nil, err
	}
	if sel == nil {
		return s.all, s.t.ix, nil
	}
	a, err := sel.analysis(s.t.req)
	return a, sel.ix, err
}

type requestsJSON struct {
	Total int          `json:"total"` // spans selected, of which the slowest are listed
	Spans []spans.JSON `json:"spans"`
}

// requestList answers /api/requests?top=N&funcs=K: the trace's spans,
// its requests, the N slowest first, with the K functions their calls
// spent the most own time in, as calltrail spans --json lists them;
// with trace-id and span, those they select.
func (s *Server) requestList(_ http.ResponseWriter, _ *http.Request, p *params) (any, error) {
	f := p.requests()
	top := int(p.int("top", 100, 1, 1000))
	funcs := int(p.int("funcs", 3, 0, 10))
	if p.err != nil {
		return nil, nil
	}
	out := requestsJSON{Spans: []spans.JSON{}}
	rq := s.t.req
	if rq == nil {
		if f.Requests() {
			_, err := s.selected(f)
			return nil, err
		}
		return out, nil
	}
	keep := func(tracefile.SpanID) bool { return true }
	if f.Requests() {
		var err error
		if keep, err = rq.index.Select(f.TraceID, f.Span); err != nil {
			return nil, notFound(err.Error())
		}
	}
	for _, sp := range rq.slowest {
		if !keep(sp.ID) {
			continue
		}
		out.Total++
		if len(out.Spans) == top {
			continue
		}
		out.Spans = append(out.Spans, rq.index.JSON(sp, funcs))
	}
	return out, nil
}

type failedJSON struct {
	Total int              `json:"total"` // calls that failed, of which the first are listed
	Calls []failedCallJSON `json:"calls"`
}

type failedCallJSON struct {
	G     uint64           `json:"g"`
	Call  int              `json:"call"` // index in the goroutine's lane
	Func  uint32           `json:"func"`
	Start int64            `json:"start_ns"`
	Dur   int64            `json:"duration_ns"`
	Error *tracefile.Error `json:"error"`
}

// failedCalls answers /api/failed?limit=N: the first N calls, by start,
// that returned an error (tracefile.Error.End's are not failures), of
// the trace or, with trace-id and span, of the requests they select.
func (s *Server) failedCalls(_ http.ResponseWriter, _ *http.Request, p *params) (any, error) {
	f := p.requests()
	limit := int(p.int("limit", 100, 1, 1000))
	if p.err != nil {
		return nil, nil
	}
	ix, err := s.indexFor(f)
	if err != nil {
		return nil, err
	}
	out := failedJSON{Calls: []failedCallJSON{}}
	type call struct {
		l *lane
		i int32
	}
	byStart := func(a, b call) int {
		if c := cmp.Compare(a.l.start[a.i], b.l.start[b.i]); c != 0 {
			return c
		}
		return cmp.Compare(a.l.g, b.l.g)
	}
	var first []call
	for _, l := range ix.lanes {
		out.Total += len(l.failed)
		// A lane's calls are in order of start: its first few are all
		// the list can take of it.
		for _, i := range l.failed[:min(limit, len(l.failed))] {
			first = append(first, call{l, i})
		}
		if len(first) > 4*limit {
			slices.SortFunc(first, byStart)
			first = first[:limit]
		}
	}
	slices.SortFunc(first, byStart)
	for _, c := range first[:min(limit, len(first))] {
		l, i := c.l, int(c.i)
		out.Calls = append(out.Calls, failedCallJSON{G: l.g, Call: i, Func: l.fn[i], Start: l.start[i], Dur: l.dur[i] - l.heldFor(i), Error: s.t.callError(l.errAt(i))})
	}
	return out, nil
}
