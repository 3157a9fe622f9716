package otlp

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"regexp"
	"slices"
	"sort"
	"time"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/spawn"
	"github.com/calltrail/calltrail/spans"
	"github.com/calltrail/calltrail/tracefile"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Options choose the calls worth a span, and describe the process.
type Options struct {
	// A call becomes a span if its function matches Funcs, if it lasted
	// at least Slower (when not zero), or if Failed is set and it
	// returned an error, panicked or ended its goroutine.
	Funcs  *regexp.Regexp
	Slower time.Duration
	Failed bool

	// Filter, if not nil, leaves out calls first, as it does for every
	// view of a trace.
	Filter *filter.Filter

	Service string            // service.name; default: the trace's program
	Labels  map[string]string // more attributes of the process, as labels of a push (see store.ParseLabel)
	ID      string            // the trace file's id, for span ids; default: from its metadata

	Limit int // most spans; 0 means MaxSpans
}

// MaxSpans is how many spans Spans makes at most, by default: span
// stores and their viewers slow down well before.
const MaxSpans = 200_000

// ErrTooMany says the options chose more calls than Options.Limit.
type ErrTooMany struct{ Limit int }

func (e *ErrTooMany) Error() string {
	return fmt.Sprintf("more than %d calls are worth a span: choose fewer with --spans, --slower or the filters -g, -F, -N, -D and --window", e.Limit)
}

// Scope is the instrumentation scope of the spans.
const Scope = "github.com/calltrail/calltrail"

// span is a call that becomes a span.
type span struct {
	id         uint64
	parent     *span // the innermost enclosing span in its goroutine
	link       *span // for a goroutine's outermost spans: the parent goroutine's span
	g          uint64
	fn         uint32
	depth      int
	start, end int64
	held       int64 // time held up by the trace writer, within start to end
	exit       tracefile.ExitKind
	err        uint32
	trace      [16]byte
	traced     bool // trace is set
	onPath     bool // traceOf is walking through it
	// req is the OpenTelemetry span of the program's the call ran
	// under (see tracefile.Event.Span), zero if none or not known yet.
	req tracefile.SpanID
}

// frame is an open call.
type frame struct {
	fn      uint32
	start   int64
	req     tracefile.SpanID
	pending []*span // spans below it whose parent is not known yet
}

// stack is a goroutine's open calls.
type stack struct {
	frames  []frame
	pending spawn.Pending[call] // goroutines it started, waiting for the call that did
	latest  int64               // the time of its latest enter or exit read
}

// call is an open call of a goroutine, by its depth and start, with the
// program's span it ran under.
type call struct {
	depth int // 1 for the outermost
	start int64
	req   tracefile.SpanID
}

// Len, At and Latest make a goroutine's open calls a spawn.Stack.
func (s *stack) Len() int { return len(s.frames) }

func (s *stack) Latest() int64 { return s.latest }

func (s *stack) At(i int) (uint32, call) {
	return s.frames[i].fn, call{depth: i + 1, start: s.frames[i].start, req: s.frames[i].req}
}

// Spans reads r and returns the spans of the calls o chooses. Of a
// damaged trace it returns the spans of the calls before the damage and
// the error that stopped reading.
func Spans(r *tracefile.Reader, o Options) (ptrace.Traces, error) {
	if o.Limit == 0 {
		o.Limit = MaxSpans
	}
	f := o.Filter
	if f == nil {
		f = &filter.Filter{}
	}
	b := builder{r: r, o: o, seed: seed(r, o.ID), stacks: map[uint64]*stack{}, spans: map[uint64][]*span{}, match: map[uint32]bool{}, from: map[uint64]started{}}
	// A goroutine's outermost spans are children of the span of the call
	// that started it, found as the analysis finds it.
	links := spawn.New(0, func(l *spawn.Link[call]) {
		if l.HasFrom {
			b.from[l.G] = started{parent: l.Parent, call: l.From}
			if r.HasSpans() { // else none to inherit: nothing kept
				b.inherit.Started(l.G, l.Parent, l.At, spans.Origin{Span: l.From.req, Start: l.From.start})
			}
		}
	})
	sel := f.Selector(func(id uint32) string { return r.Func(id).Name })
	var readErr error
	var ev tracefile.Event
	for {
		err := r.Read(&ev)
		if err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
		st := b.stacks[ev.G]
		switch ev.Kind {
		case tracefile.GoroutineEvent:
			info, _ := r.Goroutine(ev.G)
			var ps spawn.Stack[call]
			var pending *spawn.Pending[call]
			if p := b.stacks[info.Parent]; p != nil && len(p.frames) > 0 {
				ps, pending = p, &p.pending
			}
			links.Started(ev.G, info.Parent, info.CreatorFunc, ev.Time, ps, pending)
			continue
		case tracefile.EnterEvent:
			sel.Enter(ev.G, ev.Func, ev.Time)
			if st == nil {
				st = &stack{}
				b.stacks[ev.G] = st
			}
			links.Enter(ev.G, &st.pending, ev.Func, ev.Time, call{depth: len(st.frames) + 1, start: ev.Time, req: ev.Span}, st)
			st.frames = append(st.frames, frame{fn: ev.Func, start: ev.Time, req: ev.Span})
			st.latest = ev.Time
			continue
		case tracefile.SpanStartEvent, tracefile.SpanEndEvent:
			b.inherit.Span(&ev)
			continue
		case tracefile.ExitEvent:
		default:
			continue
		}
		chosen := sel.Exit(ev.G, ev.Duration()) && b.worth(&ev)
		if st == nil || len(st.frames) == 0 {
			continue
		}
		links.Exit(&st.pending, ev.Time, st)
		st.latest = ev.Time
		fr := st.frames[len(st.frames)-1]
		st.frames = st.frames[:len(st.frames)-1]
		b.seq++
		if chosen {
			if b.n >= o.Limit {
				return ptrace.NewTraces(), &ErrTooMany{Limit: o.Limit}
			}
			b.n++
			s := &span{id: b.spanID(b.seq), g: ev.G, fn: ev.Func, depth: len(st.frames) + 1, start: ev.Start, end: ev.Time, held: ev.Held, exit: ev.Exit, err: ev.Err, req: ev.Span}
			for _, c := range fr.pending {
				c.parent = s
			}
			fr.pending = []*span{s}
			b.spans[ev.G] = append(b.spans[ev.G], s)
		}
		if n := len(st.frames); n > 0 {
			st.frames[n-1].pending = append(st.frames[n-1].pending, fr.pending...)
		} else {
			links.Idle(ev.G, &st.pending, fr.fn, call{depth: 1, start: fr.start, req: fr.req})
			delete(b.stacks, ev.G)
		}
	}
	links.Flush()
	if readErr != nil && !tracefile.IsIncomplete(readErr) {
		return ptrace.NewTraces(), readErr
	}
	b.links()
	b.requests()
	return b.traces(), readErr
}

// requests gives the spans of calls in goroutines started under one of
// the program's spans that span, as the reader does given
// tracefile.Reader.InheritSpans.
func (b *builder) requests() {
	inherit := b.inherit.Resolve()
	for g, ss := range b.spans {
		for _, s := range ss {
			if !s.req.IsValid() {
				s.req = inherit[g]
			}
		}
	}
}

type builder struct {
	r      *tracefile.Reader
	o      Options
	seed   []byte
	seq    uint64             // calls ended so far
	n      int                // spans so far
	stacks map[uint64]*stack  // open calls by goroutine
	from   map[uint64]started // the call that started each goroutine
	spans  map[uint64][]*span // by goroutine, in order of their end
	match  map[uint32]bool    // whether Options.Funcs matches, by function
	// inherit finds the program's span each goroutine was started
	// under, as package spans does for every view.
	inherit spans.Inheritance
}

func (b *builder) worth(ev *tracefile.Event) bool {
	switch {
	case b.o.Failed && (ev.Err != 0 && !b.r.Error(ev.Err).End() || ev.Exit == tracefile.Panic || ev.Exit == tracefile.Goexit):
		return true
	case b.o.Slower > 0 && ev.Duration() >= b.o.Slower:
		return true
	case b.o.Funcs != nil:
		m, ok := b.match[ev.Func]
		if !ok {
			m = b.o.Funcs.MatchString(b.r.Func(ev.Func).Name)
			b.match[ev.Func] = m
		}
		return m
	}
	return false
}

// seed is what makes the ids of one trace file's spans its own.
func seed(r *tracefile.Reader, id string) []byte {
	if id == "" {
		m := r.Meta()
		// The values as written, not as parsed: the same bytes give
		// the same ids.
		id = m.Program + "\x00" + m.Keys["pid"] + "\x00" + m.Keys["start"]
	}
	return []byte(id)
}

// hash is a 128-bit hash of the trace file's seed, n and what.
func (b *builder) hash(n uint64, what byte) []byte {
	h := fnv.New128a()
	h.Write(b.seed)
	var p [9]byte
	binary.LittleEndian.PutUint64(p[:], n)
	p[8] = what
	h.Write(p[:])
	return h.Sum(nil)
}

// spanID is the id of the span of the seq-th call to end.
func (b *builder) spanID(seq uint64) uint64 {
	return binary.BigEndian.Uint64(b.hash(seq, 's')) | 1 // never the invalid id 0
}

// started is the call of a goroutine's parent that started it.
type started struct {
	parent uint64
	call   call
}

// links gives each goroutine's outermost spans their link to the
// innermost span of its parent around the call that started it.
func (b *builder) links() {
	byStart := map[uint64][]*span{}
	for g, spans := range b.spans {
		from, ok := b.from[g]
		if !ok || len(b.spans[from.parent]) == 0 {
			continue
		}
		ps, ok := byStart[from.parent]
		if !ok {
			ps = slices.Clone(b.spans[from.parent])
			slices.SortStableFunc(ps, func(x, y *span) int {
				if c := cmp.Compare(x.start, y.start); c != 0 {
					return c
				}
				return cmp.Compare(x.depth, y.depth) // the outer first
			})
			byStart[from.parent] = ps
		}
		l := around(ps, from.call)
		if l == nil {
			continue
		}
		for _, s := range spans {
			if s.parent == nil {
				s.link = l
			}
		}
	}
}

// around returns the innermost of spans, one goroutine's in order of
// their start, that holds call c: c's own span, or one of its callers'.
// A goroutine's spans nest, so the last to start by c's start is c's,
// one of its callers', or inside one of theirs.
func around(spans []*span, c call) *span {
	i := sort.Search(len(spans), func(i int) bool {
		s := spans[i]
		return s.start > c.start || s.start == c.start && s.depth > c.depth
	}) - 1
	if i < 0 {
		return nil
	}
	s := spans[i]
	for s != nil && !(s.depth < c.depth && s.end >= c.start || s.depth == c.depth && s.start == c.start) {
		s = s.parent
	}
	return s
}

// traceOf returns the trace id of s: that of the program's span it ran
// under, its parent's, its link's, or, for a span that has none of them,
// one of its own.
func (b *builder) traceOf(s *span) [16]byte {
	var path []*span
	for a := s; ; {
		if a.traced {
			break
		}
		if r, ok := b.r.Span(a.req); ok && r.Trace.IsValid() {
			a.trace, a.traced = r.Trace, true // the request's
			break
		}
		path = append(path, a)
		a.onPath = true
		next := a.parent
		if next == nil {
			next = a.link
		}
		if next == nil || next.onPath {
			// A root, or, in a damaged trace whose goroutines are
			// each other's parents, the span that closes a cycle.
			copy(a.trace[:], b.hash(a.id, 't'))
			a.traced = true
			break
		}
		a = next
	}
	for _, a := range path {
		a.onPath = false
	}
	for i := len(path) - 1; i >= 0; i-- {
		a := path[i]
		if a.traced {
			continue
		}
		up := a.parent
		if up == nil {
			up = a.link
		}
		a.trace, a.traced = up.trace, true
	}
	return s.trace
}

func (b *builder) traces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	res := rs.Resource().Attributes()
	m := b.r.Meta()
	service := b.o.Service
	if service == "" {
		service = m.Program
	}
	res.PutStr("service.name", service)
	if m.Program != "" {
		res.PutStr("process.executable.name", m.Program)
	}
	if m.PID != 0 {
		res.PutInt("process.pid", int64(m.PID))
	}
	res.PutStr("process.runtime.name", "go")
	if m.Go != "" {
		res.PutStr("process.runtime.version", m.Go)
	}
	keys := make([]string, 0, len(b.o.Labels))
	for k := range b.o.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		res.PutStr(k, b.o.Labels[k])
	}
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(Scope)
	base := m.Start
	at := func(ns int64) pcommon.Timestamp { return pcommon.NewTimestampFromTime(base.Add(time.Duration(ns))) }
	out := ss.Spans()
	out.EnsureCapacity(b.n)
	for _, g := range sortedKeys(b.spans) {
		for _, s := range b.spans[g] {
			sp := out.AppendEmpty()
			sp.SetTraceID(pcommon.TraceID(b.traceOf(s)))
			sp.SetSpanID(spanID(s.id))
			switch r, ok := b.r.Span(s.req); {
			case ok && r.Trace.IsValid() && (s.parent == nil || s.parent.req != s.req):
				// The outermost call of its goroutine that ran under
				// the program's span r, in r's trace: a child of r.
				sp.SetParentSpanID(pcommon.SpanID(r.ID))
			case s.parent != nil:
				sp.SetParentSpanID(spanID(s.parent.id))
			}
			fn := b.r.Func(s.fn)
			sp.SetName(fn.Name)
			sp.SetKind(ptrace.SpanKindInternal)
			sp.SetStartTimestamp(at(s.start))
			sp.SetEndTimestamp(at(s.end))
			a := sp.Attributes()
			a.PutStr("code.function.name", fn.Name)
			if fn.File != "" {
				a.PutStr("code.file.path", fn.File)
				a.PutInt("code.line.number", int64(fn.Line))
			}
			a.PutInt("calltrail.goroutine", int64(s.g))
			if s.held > 0 {
				// The span lasts as the call did; this much of it the
				// trace writer held the goroutine up.
				a.PutInt("calltrail.held_up_ns", s.held)
			}
			if s.exit != tracefile.Return {
				a.PutStr("calltrail.exit", s.exit.String())
			}
			switch {
			case s.err != 0 && b.r.Error(s.err).End():
				// The end of something, not a failure: said, with no
				// error status (see tracefile.Ends).
				a.PutStr("calltrail.end", b.r.Error(s.err).String())
			case s.err != 0:
				e := b.r.Error(s.err)
				a.PutStr("error.type", e.Type)
				sp.Status().SetCode(ptrace.StatusCodeError)
				sp.Status().SetMessage(e.Message)
			case s.exit == tracefile.Panic || s.exit == tracefile.Goexit:
				sp.Status().SetCode(ptrace.StatusCodeError)
				sp.Status().SetMessage(s.exit.String())
			}
			if s.link != nil {
				l := sp.Links().AppendEmpty()
				l.SetTraceID(pcommon.TraceID(b.traceOf(s.link)))
				l.SetSpanID(spanID(s.link.id))
				if info, ok := b.r.Goroutine(s.g); ok {
					l.Attributes().PutInt("calltrail.goroutine.parent", int64(info.Parent))
				}
			}
		}
	}
	return td
}

func spanID(id uint64) pcommon.SpanID {
	var s pcommon.SpanID
	binary.BigEndian.PutUint64(s[:], id)
	return s
}

func sortedKeys(m map[uint64][]*span) []uint64 {
	keys := make([]uint64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
