package spans

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/calltrail/calltrail/internal/spawn"
	"github.com/calltrail/calltrail/tracefile"
)

// A Span is a span of the trace: its table entry, when and where it ran,
// and, once Index.Count has run, what its calls did.
type Span struct {
	tracefile.Span
	G     uint64 // the goroutine that started it
	Start int64  // nanoseconds since the trace started
	End   int64  // when it ended; the trace's end if it did not
	Ended bool

	// Calls counts the calls that ran for the span or for a span under
	// it in this program, in every goroutine; Goroutines counts those.
	Calls      uint64
	Goroutines int
	// Funcs are the functions those calls spent their own time in,
	// most first.
	Funcs []Func
	// Errors counts those calls that returned an error; Panics those a
	// panic left.
	Errors, Panics uint64

	self       map[uint32]*Func
	goroutines map[uint64]struct{}
}

// Duration is how long the span lasted.
func (s *Span) Duration() int64 { return max(s.End-s.Start, 0) }

// Func is a function's share of a span's calls.
type Func struct {
	ID    uint32 `json:"-"`
	Name  string `json:"name"`
	Calls uint64 `json:"calls"`
	Self  int64  `json:"self_ns"` // time in its own code
}

// Index is the spans of a trace and the span each goroutine was started
// under.
type Index struct {
	Spans   []*Span // in the order they started
	ByID    map[tracefile.SpanID]*Span
	Inherit map[uint64]tracefile.SpanID // by goroutine; those started under none are absent
	// Duration is the trace's, the end of spans that did not end.
	Duration int64
}

// chain is what the first pass keeps of an open call for package spawn:
// its span when it began and its start.
type chain = Origin

type stack struct {
	calls   []chainCall
	pending spawn.Pending[chain]
	latest  int64 // the time of its latest enter or exit read
}

type chainCall struct {
	fn uint32
	c  chain
}

func (s *stack) Len() int                 { return len(s.calls) }
func (s *stack) At(i int) (uint32, chain) { return s.calls[i].fn, s.calls[i].c }
func (s *stack) Latest() int64            { return s.latest }

// Read reads r to its end and returns the trace's spans and the span each
// goroutine was started under. A trace without spans gives an empty
// Index. The error is the one that stopped reading, nil at the end of
// the trace.
func Read(r *tracefile.Reader) (*Index, error) {
	ix := &Index{ByID: map[tracefile.SpanID]*Span{}}
	var h Inheritance
	links := spawn.New(0, func(l *spawn.Link[chain]) {
		// Before the trace has a span, no goroutine can inherit one:
		// a trace of a million goroutines and no spans keeps nothing.
		if l.HasFrom && r.HasSpans() {
			h.Started(l.G, l.Parent, l.At, l.From)
		}
	})
	stacks := map[uint64]*stack{}
	var ev tracefile.Event
	var err error
	for {
		if err = r.Read(&ev); err != nil {
			break
		}
		st := stacks[ev.G]
		switch ev.Kind {
		case tracefile.SpanStartEvent:
			h.Span(&ev)
			if ix.ByID[ev.Span] == nil {
				e, _ := r.Span(ev.Span)
				s := &Span{Span: e, G: ev.G, Start: ev.Time}
				ix.Spans = append(ix.Spans, s)
				ix.ByID[ev.Span] = s
			}
		case tracefile.SpanEndEvent:
			h.Span(&ev)
			if s := ix.ByID[ev.Span]; s != nil && !s.Ended {
				s.End, s.Ended = ev.Time, true
			}
		case tracefile.GoroutineEvent:
			info, _ := r.Goroutine(ev.G)
			var ps spawn.Stack[chain]
			var pending *spawn.Pending[chain]
			if p := stacks[info.Parent]; p != nil && len(p.calls) > 0 {
				ps, pending = p, &p.pending
			}
			links.Started(ev.G, info.Parent, info.CreatorFunc, ev.Time, ps, pending)
		case tracefile.EnterEvent:
			if st == nil {
				st = &stack{}
				stacks[ev.G] = st
			}
			c := chain{Span: ev.Span, Start: ev.Time}
			links.Enter(ev.G, &st.pending, ev.Func, ev.Time, c, st)
			st.calls = append(st.calls, chainCall{ev.Func, c})
			st.latest = ev.Time
		case tracefile.ExitEvent:
			if st == nil || len(st.calls) == 0 {
				continue
			}
			links.Exit(&st.pending, ev.Time, st)
			root := st.calls[0]
			st.calls = st.calls[:len(st.calls)-1]
			st.latest = ev.Time
			if len(st.calls) == 0 {
				links.Idle(ev.G, &st.pending, root.fn, root.c)
				delete(stacks, ev.G)
			}
		}
	}
	links.Flush()
	ix.Duration = r.MaxTime()
	for _, s := range ix.Spans {
		if !s.Ended {
			s.End = max(ix.Duration, s.Start)
		}
	}
	ix.Inherit = h.Resolve()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return ix, err
}

// An Origin is what Inheritance needs of the call that started a
// goroutine: the span it ran under and when it began.
type Origin struct {
	Span  tracefile.SpanID
	Start int64
}

// Inheritance works out, from a pass over a trace, the span each
// goroutine was started under: the innermost span open on its parent when
// it began, if that span began within the call that started it, or else
// the span that call ran under; for a call that ran under none, the
// span the parent itself was started under, and so on up. A goroutine
// begins, as the trace knows it, with its first traced call, after its
// go statement: a span its parent started in between, rare, would be
// taken for the one it was started under.
type Inheritance struct {
	spans map[uint64][]interval // by goroutine, in order of their start
	from  map[uint64]origin     // by goroutine
}

type interval struct {
	id         tracefile.SpanID
	start, end int64
	ended      bool
}

type origin struct {
	parent uint64
	at     int64 // when the goroutine began
	call   Origin
}

// Span tells of a span event.
func (h *Inheritance) Span(ev *tracefile.Event) {
	if h.spans == nil {
		h.spans = map[uint64][]interval{}
	}
	switch ev.Kind {
	case tracefile.SpanStartEvent:
		h.spans[ev.G] = append(h.spans[ev.G], interval{id: ev.Span, start: ev.Time})
	case tracefile.SpanEndEvent:
		is := h.spans[ev.G]
		for i := len(is) - 1; i >= 0; i-- {
			if is[i].id == ev.Span && !is[i].ended {
				is[i].end, is[i].ended = ev.Time, true
				break
			}
		}
	}
}

// Started tells that goroutine g, which began at time at, was started by
// goroutine parent's call call.
func (h *Inheritance) Started(g, parent uint64, at int64, call Origin) {
	if h.from == nil {
		h.from = map[uint64]origin{}
	}
	h.from[g] = origin{parent, at, call}
}

// Resolve returns the span each goroutine was started under, for those
// started under one.
func (h *Inheritance) Resolve() map[uint64]tracefile.SpanID {
	out := map[uint64]tracefile.SpanID{}
	done := map[uint64]bool{}
	var resolve func(g uint64, depth int) tracefile.SpanID
	resolve = func(g uint64, depth int) tracefile.SpanID {
		if done[g] {
			return out[g]
		}
		o, ok := h.from[g]
		if !ok || depth > 1000 {
			return tracefile.SpanID{}
		}
		done[g] = true // a cycle, in a damaged trace, ends here
		s := o.call.Span
		// The innermost span open on the parent when g began, among
		// those begun within the call that started it.
		for _, iv := range h.spans[o.parent] {
			if iv.start > o.at {
				break
			}
			if iv.start >= o.call.Start && (!iv.ended || iv.end > o.at) {
				s = iv.id
			}
		}
		if !s.IsValid() && o.parent != g {
			s = resolve(o.parent, depth+1)
		}
		if s.IsValid() {
			out[g] = s
		}
		return s
	}
	for g := range h.from {
		resolve(g, 0)
	}
	return out
}

// Trace returns the spans of the trace whose id is id, in hex.
func (ix *Index) Trace(id string) []*Span {
	var out []*Span
	for _, s := range ix.Spans {
		if s.Trace.String() == id {
			out = append(out, s)
		}
	}
	return out
}

// Keep returns the selection of the calls of the spans of trace traceID
// (hex; "" for any), under a span whose name, or an ancestor's in this
// program, matches name (nil for any), for tracefile.Reader.KeepSpans,
// and whether any span is selected.
func (ix *Index) Keep(traceID string, name *regexp.Regexp) (func(tracefile.SpanID) bool, bool) {
	traceID = strings.ToLower(traceID)
	kept := map[tracefile.SpanID]bool{}
	for _, s := range ix.Spans {
		if traceID != "" && s.Trace.String() != traceID {
			continue
		}
		if name != nil && !ix.named(s, name) {
			continue
		}
		kept[s.ID] = true
	}
	return func(id tracefile.SpanID) bool { return kept[id] }, len(kept) > 0
}

// named reports whether s or one of its ancestors in this program has a
// name name matches.
func (ix *Index) named(s *Span, name *regexp.Regexp) bool {
	for i := 0; s != nil && i < 1000; i++ {
		if name.MatchString(s.Name) {
			return true
		}
		if s.Parent == s.ID {
			break
		}
		s = ix.ByID[s.Parent]
	}
	return false
}

// Select is the selection of --trace-id and --span in a form the
// command line can report: an error when they name no span of the trace.
func (ix *Index) Select(traceID string, name *regexp.Regexp) (func(tracefile.SpanID) bool, error) {
	keep, any := ix.Keep(traceID, name)
	if any {
		return keep, nil
	}
	switch {
	case len(ix.Spans) == 0:
		return nil, fmt.Errorf("the trace has no OpenTelemetry spans (the program started none, or was not built by calltrail with the OpenTelemetry SDK)")
	case traceID != "" && len(ix.Trace(strings.ToLower(traceID))) == 0:
		return nil, fmt.Errorf("--trace-id %s: no span of the trace has that trace id (calltrail spans lists them)", traceID)
	}
	return nil, fmt.Errorf("--span %s: matches no span of the selected requests (calltrail spans lists them)", name)
}

// maxFuncEntries bounds the function entries Count keeps over all spans.
const maxFuncEntries = 1 << 20

// Count reads r, whose spans ix holds, and fills in what each span's
// calls did: calls, goroutines, errors, panics and the functions they
// spent their own time in, a span's counting those of the spans under it.
func (ix *Index) Count(r *tracefile.Reader, fname func(uint32) string) error {
	r.InheritSpans(ix.Inherit)
	type open struct {
		children int64
	}
	stacks := map[uint64][]open{}
	entries := 0
	var ev tracefile.Event
	var err error
	for {
		if err = r.Read(&ev); err != nil {
			break
		}
		switch ev.Kind {
		case tracefile.EnterEvent:
			stacks[ev.G] = append(stacks[ev.G], open{})
		case tracefile.ExitEvent:
			st := stacks[ev.G]
			if len(st) == 0 {
				continue
			}
			fr := st[len(st)-1]
			st = st[:len(st)-1]
			d := int64(ev.Duration())
			if len(st) > 0 {
				st[len(st)-1].children += d
				stacks[ev.G] = st
			} else {
				delete(stacks, ev.G)
			}
			s := ix.ByID[ev.Span]
			if s == nil {
				continue
			}
			s.Calls++
			if ev.Err != 0 {
				s.Errors++
			}
			if ev.Exit == tracefile.Panic {
				s.Panics++
			}
			if s.goroutines == nil {
				s.goroutines = map[uint64]struct{}{}
			}
			s.goroutines[ev.G] = struct{}{}
			if s.self == nil {
				s.self = map[uint32]*Func{}
			}
			f := s.self[ev.Func]
			if f == nil {
				if entries >= maxFuncEntries {
					continue
				}
				entries++
				f = &Func{ID: ev.Func}
				s.self[ev.Func] = f
			}
			f.Calls++
			f.Self += d - fr.children
		}
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	// A span's calls include those of the spans under it: fold each
	// span's own into its ancestors', children before parents.
	order := slices.Clone(ix.Spans)
	depth := map[*Span]int{}
	var depthOf func(s *Span, n int) int
	depthOf = func(s *Span, n int) int {
		if d, ok := depth[s]; ok {
			return d
		}
		d := 0
		if p := ix.ByID[s.Parent]; p != nil && p != s && n < 1000 {
			d = depthOf(p, n+1) + 1
		}
		depth[s] = d
		return d
	}
	sort.SliceStable(order, func(i, j int) bool { return depthOf(order[i], 0) > depthOf(order[j], 0) })
	for _, s := range order {
		p := ix.ByID[s.Parent]
		if p == nil || p == s {
			continue
		}
		p.Calls += s.Calls
		p.Errors += s.Errors
		p.Panics += s.Panics
		if len(s.goroutines) > 0 && p.goroutines == nil {
			p.goroutines = map[uint64]struct{}{}
		}
		for g := range s.goroutines {
			p.goroutines[g] = struct{}{}
		}
		if len(s.self) > 0 && p.self == nil {
			p.self = map[uint32]*Func{}
		}
		for id, f := range s.self {
			pf := p.self[id]
			if pf == nil {
				pf = &Func{ID: id}
				p.self[id] = pf
			}
			pf.Calls += f.Calls
			pf.Self += f.Self
		}
	}
	for _, s := range ix.Spans {
		s.Goroutines = len(s.goroutines)
		s.Funcs = s.Funcs[:0]
		for _, f := range s.self {
			f.Name = fname(f.ID)
			s.Funcs = append(s.Funcs, *f)
		}
		sort.Slice(s.Funcs, func(i, j int) bool {
			if s.Funcs[i].Self != s.Funcs[j].Self {
				return s.Funcs[i].Self > s.Funcs[j].Self
			}
			return s.Funcs[i].Name < s.Funcs[j].Name
		})
		s.self, s.goroutines = nil, nil
	}
	return err
}

// Slowest returns the spans, longest first.
func (ix *Index) Slowest() []*Span {
	out := slices.Clone(ix.Spans)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Duration() > out[j].Duration() })
	return out
}

// JSON is a span as calltrail spans --json and the web UI list it.
type JSON struct {
	tracefile.Span
	Goroutine  uint64 `json:"goroutine"`
	StartNs    int64  `json:"start_ns"`
	DurationNs int64  `json:"duration_ns"`
	Ended      bool   `json:"ended"`
	Calls      uint64 `json:"calls"`
	Goroutines int    `json:"goroutines"`
	Errors     uint64 `json:"errors"`
	Panics     uint64 `json:"panics"`
	Funcs      []Func `json:"functions"`
	// Nested says the span's parent is a span of this program too: it
	// is part of a request the program served, which its trace id
	// selects, and its name selects it within.
	Nested bool `json:"nested,omitempty"`
}

// JSON returns s as JSON lists it, with the funcs functions its calls
// spent the most own time in.
func (ix *Index) JSON(s *Span, funcs int) JSON {
	parent := ix.ByID[s.Parent]
	return JSON{
		Span: s.Span, Goroutine: s.G, StartNs: s.Start, DurationNs: s.Duration(), Ended: s.Ended,
		Calls: s.Calls, Goroutines: s.Goroutines, Errors: s.Errors, Panics: s.Panics,
		Funcs: s.Funcs[:min(max(funcs, 0), len(s.Funcs))], Nested: parent != nil && parent != s,
	}
}
