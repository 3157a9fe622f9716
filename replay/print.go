package replay

import (
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/calltrail/calltrail/internal/gtable"
	"github.com/calltrail/calltrail/internal/indented"
	"github.com/calltrail/calltrail/tracefile"
)

// pieceCalls is about how many calls a piece holds: enough that handing
// it over costs little beside printing it, few enough that the pieces
// under way hold a few megabytes (over the tests of go-faster/jx, 0.7 MB
// a piece on average, 8 MB where a deep stack's calls all end).
var pieceCalls = 1 << 12

// A segment is calls lo to hi of a goroutine, to print.
type segment struct {
	id     uint64
	g      *goroutine
	lo, hi int
	// The calls open in the output at lo that it ends are its piece's
	// opens[from:to], outermost first: all of them in the goroutine's
	// last segment, in the others those its calls end.
	from, to int
	last     bool   // the goroutine's last segment: what is still open ends here
	parent   []byte // the goroutine's parent line, printed first (Options.Parents)
}

// A piece is segments printed by one goroutine into out.
type piece struct {
	segs  []segment
	opens []opened // the segments' open calls, one after the other
	calls int
	out   [][]byte // blocks of lines, the last at most blockSize long
	done  chan struct{}
}

// blockSize is the size of the blocks pieces are printed in: each is
// written in one go. Blocks of fixed size go round, where a buffer per
// piece grew as large as its piece's largest (a deep stack's calls all
// end in one), and the garbage let the heap grow to twice what replay
// keeps of the calls.
const blockSize = 64 << 10

// printer prints segments.
type printer struct {
	r      *tracefile.Reader
	names  []string
	errs   []tracefile.Error
	blocks chan []byte // blocks written, to reuse
	// mu guards the reader: its tables are whole, but an id beyond
	// them (a damaged trace's) is looked up there, and the reader's
	// lookups are not for many goroutines at once.
	mu sync.Mutex
}

func newPrinter(r *tracefile.Reader) *printer {
	pr := &printer{r: r, names: make([]string, r.NumFuncs()+1), errs: make([]tracefile.Error, r.NumErrors()+1), blocks: make(chan []byte, 256)}
	for i := range pr.names {
		pr.names[i] = r.Func(uint32(i)).Name
	}
	for i := range pr.errs {
		pr.errs[i] = r.Error(uint32(i))
	}
	return pr
}

// block returns an empty block.
func (pr *printer) block() []byte {
	select {
	case b := <-pr.blocks:
		return b[:0]
	default:
		return make([]byte, 0, blockSize+4<<10)
	}
}

// reuse takes back a block written, unless a long line made it larger.
func (pr *printer) reuse(b []byte) {
	if cap(b) <= blockSize+4<<10 {
		select {
		case pr.blocks <- b:
		default:
		}
	}
}

func (pr *printer) name(id uint32) string {
	if int(id) < len(pr.names) {
		return pr.names[id]
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.r.Func(id).Name
}

func (pr *printer) error(id uint32) tracefile.Error {
	if int(id) < len(pr.errs) {
		return pr.errs[id]
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.r.Error(id)
}

// opened is a call open in the output, and its index in its goroutine's
// calls: a copy, as its block may be printed, and let go, before it ends.
type opened struct {
	i int
	c call
}

// walk goes through calls lo to hi of g as the output shows them, open
// being the calls open at lo: for each shown call, exit for each open
// call it ends (innermost first), then enter. It returns the calls open
// at hi. exit and enter may be nil.
func walk(g *goroutine, open []opened, lo, hi int, exit func(o opened), enter func(i int)) []opened {
	for i := lo; i < hi; i++ {
		c := g.calls.at(i)
		if !c.shown() {
			continue
		}
		for len(open) > 0 && open[len(open)-1].c.depth >= c.depth {
			if exit != nil {
				exit(open[len(open)-1])
			}
			open = open[:len(open)-1]
		}
		if enter != nil {
			enter(i)
		}
		open = append(open, opened{i, *c})
	}
	return open
}

// print appends the lines of s, a segment of p, to b, and each block it
// fills to p.out; open is for the calls open as it goes.
func (pr *printer) print(b []byte, p *piece, s *segment, open []opened) ([]byte, []opened) {
	b = append(b, s.parent...)
	full := func() {
		if len(b) >= blockSize {
			p.out = append(p.out, b)
			b = pr.block()
		}
	}
	g, id := s.g, s.id
	m := g.more
	if m == nil {
		m = &more{} // reading a nil map is reading an empty one
	}
	exit := func(o opened) {
		i, c := o.i, o.c
		note := ""
		if c.kind() != tracefile.Return {
			note = c.kind().String()
		}
		if d, ok := m.before[i]; ok {
			note = strings.TrimPrefix(note+", from the window's start, "+indented.Round(time.Duration(d)).String()+" after it began", ", ")
		}
		if h, ok := m.held[i]; ok {
			// The call's time leaves it out, as every view's does.
			note = strings.TrimPrefix(note+", held up "+indented.Round(time.Duration(h)).String()+" by the trace writer", ", ")
		}
		b = indented.AppendExit(b, id, int(c.depth), pr.name(c.id()), time.Duration(c.dur), note)
		if vs, ok := m.results[i]; ok {
			b = append(appendValues(append(b[:len(b)-1], " = "...), vs), '\n')
		}
		if e, ok := m.errs[i]; ok {
			b = appendError(b[:len(b)-1], pr.error(e))
		}
		full()
	}
	enter := func(i int) {
		c := g.calls.at(i)
		b = indented.AppendEnter(b, id, int(c.depth), pr.name(c.id()))
		if vs, ok := m.args[i]; ok {
			b = append(b[:len(b)-1], '(')
			b = append(appendValues(b, vs), ")\n"...)
		}
		full()
	}
	open = walk(g, append(open[:0], p.opens[s.from:s.to]...), s.lo, s.hi, exit, enter)
	if s.last {
		for len(open) > 0 {
			exit(open[len(open)-1])
			open = open[:len(open)-1]
		}
	}
	return b, open
}

// printAll prints the calls of the goroutines ids of gs to w, in order,
// and returns the error writing them.
//
// Once the trace is read, as many goroutines as there are CPUs print: in
// pieces of some thousands of calls, each with the calls open in the
// output where it begins, worked out beforehand; one goroutine writes
// the pieces in order. On one goroutine, while the other core stood
// idle, printing was a third of replay -D 1 over 10M calls of 64
// goroutines, and most of a replay of them all: 0.64 s to 0.54 s, and
// 1.37 s to 0.94 s, on 2 cores.
//
// The blocks of calls in sp's file are read back as the pieces are made,
// and let go once printed.
func printAll(w io.Writer, pr *printer, gs *gtable.Table[goroutine], ids []uint64, o Options, sp *spill) error {
	workers := runtime.GOMAXPROCS(0)
	// The pieces go round, between printing and writing: so many of
	// them, and no more, however far ahead of the printing the making
	// of them gets.
	pieces := 2*workers + 2
	work := make(chan *piece, workers)
	inOrder := make(chan *piece, workers)
	free := make(chan *piece, pieces)
	for range pieces {
		free <- &piece{}
	}
	var werr error         // the first error writing, the writer's
	var failed atomic.Bool // werr is set, for the making of the pieces
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var open []opened
			for p := range work {
				b := pr.block()
				for i := range p.segs {
					b, open = pr.print(b, p, &p.segs[i], open)
				}
				p.out = append(p.out, b)
				close(p.done)
			}
		}()
	}
	written := make(chan struct{})
	go func() {
		defer close(written)
		for p := range inOrder {
			<-p.done
			for _, b := range p.out {
				if werr == nil && len(b) > 0 {
					var n int
					if n, werr = w.Write(b); werr == nil && n < len(b) {
						werr = io.ErrShortWrite
					}
					failed.Store(werr != nil)
				}
				pr.reuse(b)
			}
			for _, s := range p.segs {
				if s.last {
					*s.g = goroutine{} // printed: its calls can go
				} else if sp != nil {
					sp.release(&s.g.calls, s.lo)
				}
			}
			free <- p
		}
	}()
	var p *piece
	next := func() {
		p = <-free
		p.segs, p.opens, p.calls, p.out, p.done = p.segs[:0], p.opens[:0], 0, p.out[:0], make(chan struct{})
	}
	next()
	send := func() {
		work <- p
		inOrder <- p
		next()
	}
	var open, ended []opened
	for _, id := range ids {
		if failed.Load() || sp != nil && sp.err != nil {
			break
		}
		g := gs.Get(id)
		var parent []byte
		if o.Parents && g.shown > 0 { // said of the goroutines shown
			pr.mu.Lock()
			parent = appendParent(nil, pr.r, id)
			pr.mu.Unlock()
		}
		open = open[:0]
		for lo := 0; ; {
			hi := min(g.calls.n, lo+max(pieceCalls-p.calls, 1))
			if sp.load(&g.calls, lo, hi) != nil {
				break
			}
			s := segment{id: id, g: g, lo: lo, hi: hi, from: len(p.opens), last: hi == g.calls.n, parent: parent}
			if s.last {
				p.opens = append(p.opens, open...) // all end with it
			} else {
				// The calls open at lo that the segment ends, and no
				// more: those below them stay open through it, and
				// copying them all for each segment of a recursion a
				// million deep took 730 MB.
				ended = ended[:0]
				open = walk(g, open, lo, hi, func(o opened) {
					if o.i < lo {
						ended = append(ended, o)
					}
				}, nil)
				for i := len(ended) - 1; i >= 0; i-- {
					p.opens = append(p.opens, ended[i])
				}
			}
			s.to = len(p.opens)
			p.segs = append(p.segs, s)
			p.calls += max(hi-lo, 1) // a goroutine of no call shown counts too
			parent = nil
			if p.calls >= pieceCalls {
				send()
			}
			if s.last || failed.Load() {
				break
			}
			lo = hi
		}
	}
	if len(p.segs) > 0 {
		send()
	}
	close(work)
	close(inOrder)
	<-written
	wg.Wait()
	if werr == nil && sp != nil {
		werr = sp.err
	}
	return werr
}
