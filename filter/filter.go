package filter

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Filter selects calls. The zero Filter selects everything.
type Filter struct {
	G        uint64         // only this goroutine; 0 for all
	Focus    *regexp.Regexp // only calls of matching functions and their callees
	Hide     *regexp.Regexp // leave out calls of matching functions and their callees
	MaxDepth int            // leave out calls nested deeper than this; 0 for no limit
	MinTime  time.Duration  // leave out calls shorter than this
	// From and To, when set, keep only calls that start in [From, To),
	// times since the trace started; To 0 means the end.
	From, To time.Duration
	// TraceID and Span, when set, keep only the calls of requests: of
	// the OpenTelemetry spans of trace TraceID (hex), under a span whose
	// name Span matches. Package spans applies them, through the
	// trace's reader.
	TraceID string
	Span    *regexp.Regexp

	sawG bool // Goroutine was asked about G
}

// Requests reports whether the filter selects calls by the requests
// they ran for (TraceID or Span).
func (f *Filter) Requests() bool { return f.TraceID != "" || f.Span != nil }

// InWindow reports whether a call starting at start (nanoseconds since the
// trace started) is in the time window.
func (f *Filter) InWindow(start int64) bool {
	return start >= int64(f.From) && (f.To == 0 || start < int64(f.To))
}

// ParseWindow reads "FROM-TO", either side optional: "1s-2.5s", "100ms-",
// "-2s".
func ParseWindow(s string) (from, to time.Duration, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, fmt.Errorf("want FROM-TO, such as 1s-2.5s, 100ms- or -2s")
	}
	if a != "" {
		if from, err = time.ParseDuration(a); err != nil {
			return 0, 0, err
		}
	}
	if b != "" {
		if to, err = time.ParseDuration(b); err != nil {
			return 0, 0, err
		}
		if to <= from {
			return 0, 0, fmt.Errorf("the window ends before it starts")
		}
	}
	return from, to, nil
}

// Goroutine reports whether calls of goroutine g can be selected at all.
func (f *Filter) Goroutine(g uint64) bool {
	if f.G == 0 {
		return true
	}
	if f.G == g {
		f.sawG = true
		return true
	}
	return false
}

// Unseen reports whether the filter names a goroutine that no call read
// through it ran in: a goroutine that is not in the trace, or ran no
// traced function. A view can then say so rather than show nothing.
func (f *Filter) Unseen() bool { return f.G != 0 && !f.sawG }

// Long reports whether a call that lasted d is long enough to be shown.
func (f *Filter) Long(d time.Duration) bool { return d >= f.MinTime }

// Class says what a filter's patterns make of a function name.
type Class uint8

const (
	Focused Class = 1 << iota // matches -F
	Hidden                    // matches -N
)

// Class returns what the filter's patterns make of a function name.
func (f *Filter) Class(name string) Class {
	var c Class
	if f.Focus != nil && f.Focus.MatchString(name) {
		c |= Focused
	}
	if f.Hide != nil && f.Hide.MatchString(name) {
		c |= Hidden
	}
	return c
}

// Verdict is what a filter says of one call.
type Verdict uint8

const (
	Show  Verdict = iota // the call is shown
	Pass                 // not shown, but its callees may be (none focused yet)
	Prune                // neither the call nor its callees are shown
)

// Decide applies the focus, hide and depth rules to a call of a function
// of class c, depth calls deep (1 for a goroutine's outermost call), with
// focus the depth of the outermost focused call around it (0 if none).
// It returns the verdict, the depth to show the call at (1 for the
// outermost shown level: under a focus, depth counts from the focused
// call) and the focus for the call's callees.
//
// Every view applies the rules through Decide, on a stream of events
// (Tracker) or on an index of calls (the web UI's tree); the duration and
// window rules depend on the view, which has or has not seen the end.
func (f *Filter) Decide(c Class, depth, focus int) (v Verdict, shown, calleeFocus int) {
	if c&Hidden != 0 {
		return Prune, 0, focus
	}
	if f.Focus != nil && focus == 0 {
		if c&Focused == 0 {
			return Pass, 0, 0
		}
		focus = depth
	}
	shown = depth
	if focus > 0 {
		shown = depth - focus + 1
	}
	if f.MaxDepth > 0 && shown > f.MaxDepth {
		return Prune, 0, focus
	}
	return Show, shown, focus
}

// Tracker applies a Filter to the calls of one goroutine, in the order
// they begin and end.
type Tracker struct {
	f       *Filter
	depth   int     // current depth of the goroutine's calls
	focus   int     // depth of the outermost focused call, 0 if none
	pruned  int     // depth of the outermost pruned call, 0 if none
	classes []Class // memo by function id, with known set
}

// known marks a memoised class.
const known Class = 1 << 7

// NewTracker returns a Tracker for one goroutine.
func (f *Filter) NewTracker() *Tracker { return &Tracker{f: f} }

func (t *Tracker) class(id uint32, name func(uint32) string) Class {
	if t.f.Focus == nil && t.f.Hide == nil {
		return 0
	}
	if int(id) < len(t.classes) && t.classes[id] != 0 {
		return t.classes[id] &^ known
	}
	if int(id) >= len(t.classes) {
		t.classes = append(t.classes, make([]Class, int(id)+1-len(t.classes))...)
	}
	c := t.f.Class(name(id))
	t.classes[id] = c | known
	return c
}

// Enter tells the tracker a call of function id begins. It returns
// whether the call is selected and, if it is, its depth to show (1 for
// the outermost shown level). name maps function ids to names.
func (t *Tracker) Enter(id uint32, name func(uint32) string) (shown bool, depth int) {
	t.depth++
	if t.pruned != 0 {
		return false, 0
	}
	v, depth, focus := t.f.Decide(t.class(id, name), t.depth, t.focus)
	switch v {
	case Prune:
		t.pruned = t.depth
		return false, 0
	case Pass:
		return false, 0
	}
	t.focus = focus
	return true, depth
}

// Exit tells the tracker the innermost call ended.
func (t *Tracker) Exit() {
	if t.depth == t.pruned {
		t.pruned = 0
	}
	if t.depth == t.focus {
		t.focus = 0
	}
	if t.depth > 0 {
		t.depth--
	}
}

// Selector follows the calls of a trace, goroutine by goroutine, and
// tells which of them f selects: those of a selected goroutine, shown by
// the tracker, starting in the window and lasting at least MinTime. It is
// what the views of single calls (Chrome, speedscope, spans) share.
type Selector struct {
	f    *Filter
	name func(uint32) string
	gs   map[uint64]*selected
}

type selected struct {
	tracker *Tracker
	open    []bool // whether each open call is shown and in the window
}

// Selector returns a Selector of f; name maps function ids to names.
func (f *Filter) Selector(name func(uint32) string) *Selector {
	return &Selector{f: f, name: name, gs: map[uint64]*selected{}}
}

func (s *Selector) g(g uint64) *selected {
	st := s.gs[g]
	if st == nil {
		st = &selected{tracker: s.f.NewTracker()}
		s.gs[g] = st
	}
	return st
}

// Enter tells the Selector goroutine g called function fn at time t.
func (s *Selector) Enter(g uint64, fn uint32, t int64) {
	if !s.f.Goroutine(g) {
		return
	}
	st := s.g(g)
	shown, _ := st.tracker.Enter(fn, s.name)
	st.open = append(st.open, shown && s.f.InWindow(t))
}

// Exit tells the Selector goroutine g's innermost call ended after d. It
// returns whether the filter selects that call, and false for an exit
// with no call open in a goroutine the filter selects.
func (s *Selector) Exit(g uint64, d time.Duration) bool {
	if !s.f.Goroutine(g) {
		return false
	}
	st := s.g(g)
	st.tracker.Exit()
	if len(st.open) == 0 {
		return false
	}
	shown := st.open[len(st.open)-1]
	st.open = st.open[:len(st.open)-1]
	if len(st.open) == 0 {
		// A goroutine with no open call starts afresh: a trace of
		// millions of goroutines keeps the state of those running.
		delete(s.gs, g)
	}
	return shown && s.f.Long(d)
}
