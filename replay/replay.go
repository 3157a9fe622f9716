// Package replay prints a trace as the call tree of each goroutine, in
// the indented view of the original functrace tool, with the calls of one
// goroutine together:
//
//	g[01]:	->main.A1
//	g[01]:		->main.B1
//	g[01]:		<-main.B1 1.25ms
//	g[01]:	<-main.A1 1.31ms
//
// Goroutines are printed in order of id. A call cut short by the end of
// the trace is marked "(unfinished)", one left by a panic "(panic)".
package replay

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/indented"
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

// calls holds a goroutine's calls in blocks of a fixed size: growing it
// never copies what it holds, nor keeps two copies alive at once, as a
// slice doubling its array would; a goroutine of ten million calls costs
// its 16 bytes a call.
type calls struct {
	blocks [][]call
	n      int
}

const blockBits = 14

func (cs *calls) add(c call) {
	if cs.n&(1<<blockBits-1) == 0 {
		cs.blocks = append(cs.blocks, make([]call, 0, 1<<blockBits))
	}
	last := &cs.blocks[len(cs.blocks)-1]
	*last = append(*last, c)
	cs.n++
}

func (cs *calls) at(i int) *call { return &cs.blocks[i>>blockBits][i&(1<<blockBits-1)] }

type goroutine struct {
	calls   calls
	open    []int // indexes in calls of the calls still running; -1 for unshown
	tracker *filter.Tracker
	errs    map[int]uint32 // error ids of the calls that returned one, by index in calls
	held    map[int]int64  // time held up by the trace writer, of the calls that were, by index in calls
	// The arguments and results recorded with --args, by index in calls.
	args, results map[int][]tracefile.Value
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
	gs := map[uint64]*goroutine{}
	name := func(id uint32) string { return r.Func(id).Name }
	var readErr error
	for {
		ev, err := r.Next()
		if err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
		if ev.Kind == tracefile.GoroutineEvent || !f.Goroutine(ev.G) {
			continue
		}
		g := gs[ev.G]
		if g == nil {
			g = &goroutine{tracker: f.NewTracker()}
			gs[ev.G] = g
		}
		switch ev.Kind {
		case tracefile.ValueEvent:
			if len(g.open) == 0 || g.open[len(g.open)-1] < 0 {
				continue
			}
			i, m := g.open[len(g.open)-1], &g.args
			if ev.Value.Result {
				m = &g.results
			}
			if *m == nil {
				*m = map[int][]tracefile.Value{}
			}
			(*m)[i] = append((*m)[i], ev.Value)
		case tracefile.EnterEvent:
			shown, depth := g.tracker.Enter(ev.Func, name)
			if !shown || !f.InWindow(ev.Time) {
				g.open = append(g.open, -1)
				continue
			}
			g.open = append(g.open, g.calls.n)
			g.calls.add(call{fn: ev.Func&fnMask | shownBit, depth: uint32(depth)})
		case tracefile.ExitEvent:
			g.tracker.Exit()
			if len(g.open) == 0 {
				continue
			}
			i := g.open[len(g.open)-1]
			g.open = g.open[:len(g.open)-1]
			if i < 0 {
				continue
			}
			c := g.calls.at(i)
			c.dur = int64(ev.Duration())
			if ev.Held > 0 {
				if g.held == nil {
					g.held = map[int]int64{}
				}
				g.held[i] = ev.Held
			}
			if ev.Err != 0 {
				if g.errs == nil {
					g.errs = map[int]uint32{}
				}
				g.errs[i] = ev.Err
			}
			c.fn |= uint32(ev.Exit&3) << kindShift
			if !f.Long(time.Duration(c.dur)) {
				c.fn &^= shownBit
			}
		}
	}

	ids := make([]uint64, 0, len(gs))
	for id := range gs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	bw := bufio.NewWriterSize(w, 64<<10)
	var line []byte
	var stack []int // indexes in calls of the calls open in the output
	for _, id := range ids {
		if o.Parents {
			line = appendParent(line[:0], r, id)
			bw.Write(line)
		}
		stack = stack[:0]
		g := gs[id]
		pop := func(depth uint32) {
			for len(stack) > 0 && g.calls.at(stack[len(stack)-1]).depth >= depth {
				i := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				c := *g.calls.at(i)
				note := ""
				if c.kind() != tracefile.Return {
					note = c.kind().String()
				}
				if h, ok := g.held[i]; ok {
					// The call's time leaves it out, as every view's does.
					note = strings.TrimPrefix(note+", held up "+indented.Round(time.Duration(h)).String()+" by the trace writer", ", ")
				}
				line = indented.AppendExit(line[:0], id, int(c.depth), name(c.id()), time.Duration(c.dur), note)
				if vs, ok := g.results[i]; ok {
					line = append(appendValues(append(line[:len(line)-1], " = "...), vs), '\n')
				}
				if e, ok := g.errs[i]; ok {
					line = appendError(line[:len(line)-1], r.Error(e))
				}
				bw.Write(line)
			}
		}
		for i := range g.calls.n {
			c := *g.calls.at(i)
			if !c.shown() {
				continue
			}
			pop(c.depth)
			line = indented.AppendEnter(line[:0], id, int(c.depth), name(c.id()))
			if vs, ok := g.args[i]; ok {
				line = append(line[:len(line)-1], '(')
				line = append(appendValues(line, vs), ")\n"...)
			}
			bw.Write(line)
			stack = append(stack, i)
		}
		pop(0)
		delete(gs, id) // printed: its calls can go
	}
	if err := bw.Flush(); err != nil {
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
	b = append(b, e.Type...)
	b = append(b, ' ')
	b = strconv.AppendQuote(b, e.Message)
	return append(b, '\n')
}
