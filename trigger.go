package calltrail

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/tracewrite"
)

// triggers watch the flight recorder's segments as they are made, for
// calls that CALLTRAIL_TRIGGER asks to keep: when one is seen, the window
// (with a little after it) is written to a file named by the time, at
// most one file an interval. They run in the writer, on encoded events,
// never in the program's goroutines.
//
// The language, rules separated by commas:
//
//	FUNC>DURATION   a call of FUNC (its full name, main.(*T).M) that lasted longer than DURATION
//	FUNC:error      a call of FUNC that returned an error
//	panic           a call left by a panic
//	span:NAME>DURATION  an OpenTelemetry span named NAME that lasted longer than DURATION
type triggers struct {
	rules []rule
	panic *rule         // the panic rule, if one
	dir   string        // CALLTRAIL_TRIGGER_DIR, default "."
	every time.Duration // CALLTRAIL_TRIGGER_EVERY: at most a file this often, default 10s
	after time.Duration // how long after the call the window is taken

	byFunc map[uint32][]*rule // the rules of a function, none for most: names looked up once
	open   openCalls
	// bySpan holds the spans started whose name a span rule names,
	// until they end; started, when each started.
	bySpan  map[records.SpanID]*rule
	started map[records.SpanID]int64
	last    time.Time // when a trigger last wrote
	// pending are the windows fired and not yet written: each is
	// written after its aftermath, or when the trace ends, whichever
	// comes first (the writer's goroutine only).
	pending []*firing
	w       *writer // the writer whose segments it watches
}

// A firing is a trigger's window to write: once, by whichever of its
// own goroutine, after the aftermath, and the writer, when the trace
// ends first, claims it.
type firing struct {
	name, text, what string
	claimed          atomic.Bool
	done             chan struct{} // closed once its goroutine has written it
}

type rule struct {
	text string
	fn   string // the function, or for a span rule the span's name
	span bool   // span:NAME>DURATION
	// called says a call of fn was seen: a rule whose function was
	// never called is said so when the trace ends, a misspelt name
	// being the likeliest reason.
	called bool
	over   time.Duration
	panic  bool
	failed bool // FUNC:error
}

// triggerAfter is how long after the call that fires a trigger its
// window is taken: the call's aftermath, its callers returning.
const triggerAfter = 200 * time.Millisecond

// parseTriggers reads CALLTRAIL_TRIGGER's rules.
func parseTriggers(s string) ([]rule, error) {
	var rules []rule
	for _, text := range strings.Split(s, ",") {
		text = strings.TrimSpace(text)
		if text == "panic" {
			rules = append(rules, rule{text: text, panic: true})
			continue
		}
		if fn, ok := strings.CutSuffix(text, ":error"); ok && strings.TrimSpace(fn) != "" {
			rules = append(rules, rule{text: text, fn: strings.TrimSpace(fn), failed: true})
			continue
		}
		i := strings.LastIndex(text, ">")
		var over time.Duration
		err := fmt.Errorf("no >")
		if i >= 0 {
			over, err = time.ParseDuration(strings.TrimSpace(text[i+1:]))
		}
		name, span := strings.CutPrefix(text[:max(i, 0)], "span:")
		// No function's name holds < or >: main.D>>5ms is a typo,
		// not a rule that never fires. A span's name may.
		if err != nil || over < 0 || strings.TrimSpace(name) == "" || !span && strings.ContainsAny(name, "<>") {
			return nil, fmt.Errorf("CALLTRAIL_TRIGGER: %q: want FUNC>DURATION (main.D>50ms), FUNC:error, panic or span:NAME>DURATION (span:GET /orders>500ms), separated by commas", text)
		}
		if !span {
			name = strings.TrimSpace(name)
		}
		rules = append(rules, rule{text: text, fn: name, over: over, span: span})
	}
	return rules, nil
}

func newTriggers(rules []rule, dir string, every time.Duration) *triggers {
	tg := &triggers{rules: rules, dir: dir, every: every, after: triggerAfter,
		byFunc: map[uint32][]*rule{}, open: openCalls{}, bySpan: map[records.SpanID]*rule{}, started: map[records.SpanID]int64{}}
	for i := range rules {
		if rules[i].panic {
			tg.panic = &rules[i]
		}
	}
	return tg
}

// named tells of spans started in the latest cycle: those a span rule
// names are watched until they end.
func (tg *triggers) named(ss []records.Span) {
	for _, s := range ss {
		for i := range tg.rules {
			if r := &tg.rules[i]; r.span && r.fn == s.Name && len(tg.bySpan) < maxOpenSpans {
				tg.bySpan[s.ID] = r
			}
		}
	}
}

// scan follows the calls of a new segment, whose clock ran nsPerTick, and
// fires at the first call or span a rule asks for.
func (tg *triggers) scan(data []byte, reg *registry, nsPerTick float64) {
	var fired *rule
	var what string
	cur := cursor{o: tg.open}
	tracewrite.ScanEvents(data, func(e tracewrite.ScanEvent) {
		switch e.Kind {
		case records.SpanStartEvent:
			if tg.bySpan[e.Span] != nil {
				tg.started[e.Span] = e.Ticks
			}
			return
		case records.SpanEndEvent:
			r, start := tg.bySpan[e.Span], tg.started[e.Span]
			delete(tg.bySpan, e.Span)
			delete(tg.started, e.Span)
			if d := time.Duration(float64(e.Ticks-start) * nsPerTick); r != nil && start != 0 && fired == nil && d > r.over {
				fired, what = r, fmt.Sprintf("span %q (%s) took %v", r.fn, e.Span, d.Round(time.Microsecond))
			}
			return
		}
		c, ok := cur.apply(e)
		if !ok || fired != nil {
			return
		}
		if e.Exit == records.Panic && tg.panic != nil {
			fired, what = tg.panic, fmt.Sprintf("%s left by a panic in goroutine %d", reg.name(c.fn), e.G)
			return
		}
		d := time.Duration(float64(e.Ticks-c.ticks-c.held) * nsPerTick) // the call's, not the writer's
		for _, r := range tg.rulesOf(c.fn, reg) {
			switch {
			case r.failed && e.Err != 0:
				fired, what = r, fmt.Sprintf("a call of %s returned an error in goroutine %d", r.fn, e.G)
			case !r.failed && d > r.over:
				fired, what = r, fmt.Sprintf("a call of %s took %v in goroutine %d", r.fn, d.Round(time.Microsecond), e.G)
			default:
				continue
			}
			return
		}
	})
	cur.flush()
	if fired != nil {
		tg.fire(fired, what)
	}
}

// rulesOf returns the rules of function fn: FUNC>DURATION and
// FUNC:error, as many as name it.
func (tg *triggers) rulesOf(fn uint32, reg *registry) []*rule {
	rs, ok := tg.byFunc[fn]
	if !ok {
		name := reg.name(fn)
		for i := range tg.rules {
			if r := &tg.rules[i]; r.fn == name && !r.span && !r.panic {
				r.called = true
				rs = append(rs, r)
			}
		}
		tg.byFunc[fn] = rs
	}
	return rs
}

// fire writes the window to a file, a little later, unless a trigger
// wrote one less than an interval ago.
func (tg *triggers) fire(r *rule, what string) {
	now := time.Now()
	if !tg.last.IsZero() && now.Sub(tg.last) < tg.every {
		return
	}
	tg.last = now
	f := &firing{name: filepath.Join(tg.dir, "calltrail-"+now.UTC().Format("20060102T150405.000")+".trace"), text: r.text, what: what, done: make(chan struct{})}
	tg.pending = slices.DeleteFunc(tg.pending, func(f *firing) bool {
		select {
		case <-f.done:
			return true // written
		default:
			return false
		}
	})
	tg.pending = append(tg.pending, f)
	go func() {
		time.Sleep(tg.after)    // the call's aftermath: its callers returning
		tg.w.request("", false) // what is recorded so far goes into a segment
		// Claimed only now, once the writer is no longer needed: the
		// writer waits at the end for a window being written.
		if f.claimed.CompareAndSwap(false, true) {
			f.write(tg.w)
			close(f.done)
		}
	}()
}

// ended writes the windows fired and not yet written, at once: the trace
// ends (the program returns, exits, or a panic or a signal is about to
// kill it), so their aftermath is over, and the program may be gone
// before their goroutines wake. A window its goroutine is writing is
// waited for. It runs on the writer's goroutine, whose latest segment
// holds the last calls.
func (tg *triggers) ended() {
	for i := range tg.rules {
		if r := &tg.rules[i]; !r.called && !r.span && !r.panic {
			r.called = true // said once
			fmt.Fprintf(os.Stderr, "calltrail: trigger %s: no call of %s was traced (a full name, as calltrail report lists them: main.(*T).M)\n", r.text, r.fn)
		}
	}
	for _, f := range tg.pending {
		if f.claimed.CompareAndSwap(false, true) {
			f.write(tg.w)
		} else {
			<-f.done
		}
	}
	tg.pending = tg.pending[:0]
}

// write writes the window of w's flight recorder to the file and says so
// on stderr.
func (f *firing) write(w *writer) {
	if err := writeTriggered(w, f.name, "trigger "+f.text+": "+f.what); err != nil {
		fmt.Fprintf(os.Stderr, "calltrail: trigger %s fired, but the window could not be written: %v\n", f.text, err)
		return
	}
	fmt.Fprintf(os.Stderr, "calltrail: trigger %s fired (%s): window written to %s\n", f.text, f.what, f.name)
}

// writeTriggered writes a snapshot to name, whole or not at all, of the
// segments made so far.
func writeTriggered(w *writer, name, reason string) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".calltrail-trigger-*")
	if err != nil {
		return err
	}
	_, err = w.flight.write(f, 0, w.t.reg.all(), w.t.errs.all(), reason, nil)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
