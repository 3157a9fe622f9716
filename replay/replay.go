package replay

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/gtable"
	"github.com/calltrail/calltrail/tracefile"
)

// call is one shown call, kept until its goroutine is printed: 16 bytes,
// so that grouping by goroutine costs little for traces of many calls.
// Function ids are below 1<<22: how the call ended, and whether it is
// shown, sit in the bits above.
type call struct {
	dur   int64
	fn    uint32
	depth uint32
}

const (
	fnMask    = 1<<22 - 1
	kindShift = 24
	shownBit  = 1 << 31
)

func (c call) id() uint32               { return c.fn & fnMask }
func (c call) kind() tracefile.ExitKind { return tracefile.ExitKind(c.fn >> kindShift & 3) }
func (c call) shown() bool              { return c.fn&shownBit != 0 }

// calls holds a goroutine's calls: the first in place, as most
// goroutines of a server make few; the rest in blocks, of which the
// first grows as a slice does and the others are allocated whole, so
// that growing never copies more than a block, nor keeps two copies of a
// long goroutine's calls alive at once. A goroutine of ten million calls
// costs its 16 bytes a call.
//
// Past spillCalls in all, blocks go to a file (see spill): rest[k] is nil
// while block k is there, at spilled[k].
type calls struct {
	first   call
	rest    [][]call
	n       int
	spilled []int64 // by block: where it is in the file, -1 for one in memory
	queued  int     // the blocks before it are in the spill's queue
	printed int     // the blocks before it are printed (see release)
}

// blockBits sizes the blocks: 1<<blockBits calls, 256 KiB (a variable
// for the tests).
var blockBits = 14

// add appends c, and reports whether it filled its block. sp, if not
// nil, gives the blocks and brings back from its file the one c goes in.
func (cs *calls) add(c call, sp *spill) bool {
	if cs.n == 0 {
		cs.first, cs.n = c, 1
		return false
	}
	if i := cs.n - 1; i&(1<<blockBits-1) == 0 && i>>blockBits == len(cs.rest) {
		var b []call
		switch {
		case i == 0:
			b = make([]call, 0, min(4, 1<<blockBits))
		case sp != nil:
			b = sp.block()
		default:
			b = make([]call, 0, 1<<blockBits)
		}
		cs.rest = append(cs.rest, b)
	}
	last := &cs.rest[len(cs.rest)-1]
	if *last == nil {
		sp.back(cs, len(cs.rest)-1)
	}
	*last = append(*last, c)
	cs.n++
	if sp != nil {
		sp.resident++
	}
	return len(*last) == 1<<blockBits
}

func (cs *calls) at(i int) *call {
	if i == 0 {
		return &cs.first
	}
	i--
	return &cs.rest[i>>blockBits][i&(1<<blockBits-1)]
}

// goroutine is what Write keeps of a goroutine until it prints it.
type goroutine struct {
	calls calls
	more  *more // nil for a goroutine whose calls carry nothing more
	shown int   // calls shown: those of calls the filters keep at their exit
}

// more holds what few calls carry, by index in calls.
type more struct {
	errs          map[int]uint32 // error ids of the calls that returned one
	held          map[int]int64  // time held up by the trace writer, of the calls that were
	before        map[int]int64  // time before a snapshot's window, of the calls open when it began
	args, results map[int][]tracefile.Value
}

func (g *goroutine) extra() *more {
	if g.more == nil {
		g.more = &more{}
	}
	return g.more
}

// running is what Write keeps of a goroutine while it has open calls.
type running struct {
	open    []int // indexes in calls of the calls still running; -1 for unshown
	tracker filter.Tracker
}

// Options change what Write prints besides the calls.
type Options struct {
	// Parents prints, before each goroutine's calls, a line saying which
	// goroutine created it, where, and with which function it started:
	// "# g[25] created by main.main at main.go:78 in g[01], started at main.main.func1".
	Parents bool
}

// Write reads every event of r and prints the calls f selects to w. It
// returns the error that ended reading, nil at a clean end; what was read
// before an error is printed.
func Write(w io.Writer, r *tracefile.Reader, f *filter.Filter, o Options) error {
	var gs gtable.Table[goroutine]
	// Goroutines with open calls: few at a time, however many there
	// are. Their ids are dense: a table of them costs a fraction of a
	// map's lookup, insert and delete, which come with every goroutine's
	// outermost call.
	var run gtable.Table[*running]
	var free []*running // states of goroutines with no open call, to reuse
	name := func(id uint32) string { return r.Func(id).Name }
	var (
		lastID  uint64
		last    *goroutine
		lastRun *running
	)
	// A call open when a snapshot's window began counts from the
	// window's start (tracefile.Event.Start): its exit says so.
	from := int64(math.MinInt64)
	if m := r.Meta(); m.Snapshot() {
		from = int64(m.Window.Start)
	}
	sp := newSpill()
	defer sp.close()
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
		if ev.Kind == tracefile.GoroutineEvent || !f.Goroutine(ev.G) {
			continue
		}
		// Events come in runs of one goroutine: the last one's states
		// are kept at hand.
		g, rg := last, lastRun
		if ev.G != lastID || g == nil {
			g, _ = gs.Put(ev.G)
			rg = nil
			if p := run.Get(ev.G); p != nil {
				rg = *p
			}
			lastID, last, lastRun = ev.G, g, rg
		}
		if rg == nil {
			if ev.Kind != tracefile.EnterEvent {
				continue // no open call to carry a value or to end
			}
			if n := len(free); n > 0 {
				rg, free = free[n-1], free[:n-1]
			} else {
				rg = &running{}
			}
			rg.tracker = *f.NewTracker()
			p, _ := run.Put(ev.G)
			*p = rg
			lastRun = rg
		}
		switch ev.Kind {
		case tracefile.ValueEvent:
			if len(rg.open) == 0 || rg.open[len(rg.open)-1] < 0 {
				continue
			}
			i, m := rg.open[len(rg.open)-1], &g.extra().args
			if ev.Value.Result {
				m = &g.extra().results
			}
			if *m == nil {
				*m = map[int][]tracefile.Value{}
			}
			(*m)[i] = append((*m)[i], ev.Value)
		case tracefile.EnterEvent:
			shown, depth := rg.tracker.Enter(ev.Func, name)
			if !shown || !f.InWindow(ev.Time) {
				rg.open = append(rg.open, -1)
				continue
			}
			if ev.Time < from {
				if m := g.extra(); m.before == nil {
					m.before = map[int]int64{}
				}
				g.more.before[g.calls.n] = from - ev.Time
			}
			rg.open = append(rg.open, g.calls.n)
			if g.calls.add(call{fn: ev.Func&fnMask | shownBit, depth: uint32(depth)}, sp) {
				sp.queue(&g.calls, ev.G)
			}
			g.shown++
			if sp.resident > spillCalls {
				sp.trim(&gs)
			}
		case tracefile.ExitEvent:
			rg.tracker.Exit()
			i := rg.open[len(rg.open)-1]
			rg.open = rg.open[:len(rg.open)-1]
			if len(rg.open) == 0 {
				// An idle goroutine's last block, full or not, may go
				// to the file.
				sp.queue(&g.calls, ev.G)
				run.Delete(ev.G)
				lastRun = nil
				if len(free) < 1024 {
					free = append(free, rg)
				}
			}
			if i < 0 {
				continue
			}
			var scratch call
			c := sp.slot(&g.calls, i, &scratch)
			c.dur = int64(ev.Duration())
			if ev.Held > 0 {
				if m := g.extra(); m.held == nil {
					m.held = map[int]int64{}
				}
				g.more.held[i] = ev.Held
			}
			if ev.Err != 0 {
				if m := g.extra(); m.errs == nil {
					m.errs = map[int]uint32{}
				}
				g.more.errs[i] = ev.Err
			}
			c.fn |= uint32(ev.Exit&3) << kindShift
			if !f.Long(time.Duration(c.dur)) {
				c.fn &^= shownBit
				g.shown--
			}
			sp.put(&g.calls, i, c)
		}
	}
	if sp.err != nil {
		return sp.err
	}

	ids := make([]uint64, 0, gs.Len())
	gs.Range(func(id uint64, _ *goroutine) bool {
		ids = append(ids, id)
		return true
	})
	slices.Sort(ids)
	if err := printAll(w, newPrinter(r), &gs, ids, o, sp); err != nil {
		return err
	}
	return readErr
}

// appendParent appends the "# g[25] created by ..." line for goroutine id.
func appendParent(b []byte, r *tracefile.Reader, id uint64) []byte {
	b = fmt.Appendf(b, "# g[%02d]", id)
	g, ok := r.Goroutine(id)
	if !ok || g.Parent == 0 && g.CreatorFunc == 0 {
		return append(b, " created by: not recorded\n"...)
	}
	fn := r.Func(g.CreatorFunc)
	switch {
	case g.Parent == 0 && strings.HasPrefix(fn.Name, "runtime."):
		b = append(b, " created by the Go runtime"...)
	case g.CreatorFunc != 0:
		b = fmt.Appendf(b, " created by %s at %s:%d", fn.Name, fn.File, g.CreatorLine)
	}
	if g.Parent != 0 {
		b = fmt.Appendf(b, " in g[%02d]", g.Parent)
	}
	if g.StartFunc != 0 {
		b = fmt.Appendf(b, ", started at %s", r.Func(g.StartFunc).Name)
	}
	return append(b, '\n')
}

// appendValues appends values separated by commas: "abc", 3, len=2.
func appendValues(b []byte, vs []tracefile.Value) []byte {
	for i, v := range vs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, v.String()...)
	}
	return b
}

// appendError appends the error a call returned, and the line's end:
// err=*fs.PathError "open x: no such file or directory".
func appendError(b []byte, e tracefile.Error) []byte {
	b = append(b, " err="...)
	return append(e.Append(b), '\n')
}
