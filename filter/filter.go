// Package filter chooses which calls of a trace a view shows. Every
// calltrail command that reads a trace takes the same filters, with the
// same flags: -g GID, -F REGEX, -N REGEX, -D DEPTH, -t DURATION and
// -window FROM-TO.
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
}

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
func (f *Filter) Goroutine(g uint64) bool { return f.G == 0 || f.G == g }

// Long reports whether a call that lasted d is long enough to be shown.
func (f *Filter) Long(d time.Duration) bool { return d >= f.MinTime }

// Tracker applies a Filter to the calls of one goroutine, in the order
// they begin and end. Depth under a focus counts from the focused call.
type Tracker struct {
	f     *Filter
	depth int   // current depth of the goroutine's calls
	focus int   // depth of the outermost focused call, 0 if none
	hide  int   // depth of the outermost hidden call, 0 if none
	names []int // memo: function id -> 1 focus, 2 hide, 3 both, 4 neither (0 unknown)
}

// NewTracker returns a Tracker for one goroutine.
func (f *Filter) NewTracker() *Tracker { return &Tracker{f: f} }

func (t *Tracker) classify(id uint32, name func(uint32) string) int {
	if int(id) < len(t.names) && t.names[id] != 0 {
		return t.names[id]
	}
	c := 4
	n := name(id)
	if t.f.Focus != nil && t.f.Focus.MatchString(n) {
		c = 1
	}
	if t.f.Hide != nil && t.f.Hide.MatchString(n) {
		if c == 1 {
			c = 3
		} else {
			c = 2
		}
	}
	if int(id) >= len(t.names) {
		t.names = append(t.names, make([]int, int(id)+1-len(t.names))...)
	}
	t.names[id] = c
	return c
}

// Enter tells the tracker a call of function id begins. It returns
// whether the call is selected and, if it is, its depth to show (1 for
// the outermost shown level). name maps function ids to names.
func (t *Tracker) Enter(id uint32, name func(uint32) string) (shown bool, depth int) {
	t.depth++
	if t.hide != 0 {
		return false, 0
	}
	c := 4
	if t.f.Focus != nil || t.f.Hide != nil {
		c = t.classify(id, name)
	}
	if c == 2 || c == 3 {
		t.hide = t.depth
		return false, 0
	}
	if t.f.Focus != nil && t.focus == 0 {
		if c != 1 {
			return false, 0
		}
		t.focus = t.depth
	}
	depth = t.depth
	if t.focus != 0 {
		depth = t.depth - t.focus + 1
	}
	if t.f.MaxDepth > 0 && depth > t.f.MaxDepth {
		return false, 0
	}
	return true, depth
}

// Exit tells the tracker the innermost call ended.
func (t *Tracker) Exit() {
	if t.depth == t.hide {
		t.hide = 0
	}
	if t.depth == t.focus {
		t.focus = 0
	}
	if t.depth > 0 {
		t.depth--
	}
}
