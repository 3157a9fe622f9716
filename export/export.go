package export

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/tracefile"
	"github.com/google/pprof/profile"
)

// MaxStack is how deep the exports go. pprof and folded stacks keep the
// innermost MaxStack calls of a deeper chain, as Go's own profiler cuts
// its stacks (at 128 frames, GODEBUG=profstackdepth's default): they
// would otherwise hold a copy of a deep recursion's stack per call in
// it. Speedscope and Chrome, timelines that draw a row for each level of
// nesting, leave out calls nested deeper.
const MaxStack = 128

// innermost returns the last MaxStack nodes of path, and whether it cut
// any.
func innermost(path []*analysis.Node) ([]*analysis.Node, bool) {
	if len(path) > MaxStack {
		return path[len(path)-MaxStack:], true
	}
	return path, false
}

// A windowHash hashes the innermost MaxStack functions of each path of
// a walk (analysis.Profile.WalkPaths), so that chains cut to those
// functions, which meet, are found by hash instead of by comparing
// MaxStack functions with every other chain's. It keeps a polynomial
// hash of every depth's path, from which the hash of a path's last
// MaxStack functions follows in two multiplications (a rolling hash).
type windowHash struct {
	prefix []uint64 // prefix[d]: the hash of the path's first d functions
	pow    uint64   // base to the MaxStack
}

const hashBase = 0x9e3779b97f4a7c15 // odd, and its powers wrap

func newWindowHash() *windowHash {
	w := &windowHash{prefix: []uint64{0}, pow: 1}
	for range MaxStack {
		w.pow *= hashBase
	}
	return w
}

// next returns the hash of path's innermost MaxStack functions, and of
// how many there are; fn gives a node's function. It must see every
// path of the walk, in the walk's order: each path's outer part is
// hashed already, as an earlier path.
func (w *windowHash) next(path []*analysis.Node, fn func(*analysis.Node) uint32) uint64 {
	d := len(path)
	w.prefix = append(w.prefix[:d], w.prefix[d-1]*hashBase+uint64(fn(path[d-1]))+1)
	h := w.prefix[d]
	if d > MaxStack {
		h -= w.prefix[d-MaxStack] * w.pow
	}
	return h ^ uint64(min(d, MaxStack))<<56
}

// Folded writes one line per chain with self time, "root;...;leaf NS",
// as flamegraph.pl reads them; the values add up to the traced time. It
// returns how many chains it cut to their innermost MaxStack calls.
// Chains whose lines would read the same (cut ones that meet, functions
// of one name) make one line.
func Folded(w io.Writer, p *analysis.Profile) (cut int, err error) {
	// A line's names are found only once per line, not per chain: a deep
	// recursion's millions of chains cut to MaxStack calls meet in a few
	// lines. A chain is known by its innermost calls' functions, each as
	// the first function of its line's name (canon), and found among
	// the lines by a hash of them kept, as a rolling hash, for every
	// depth of the walk.
	names := map[string]uint32{}
	canon := make([]uint32, len(p.FuncTable)+1)
	name := func(id uint32) string { return strings.ReplaceAll(p.Name(id), ";", ":") }
	for id := range canon {
		if id == 0 {
			continue
		}
		n := name(uint32(id))
		if first, ok := names[n]; ok {
			canon[id] = first
		} else {
			names[n], canon[id] = uint32(id), uint32(id)
		}
	}
	// A function not in the table is named "?" (p.Name(0)'s name).
	unknown := names[name(0)]
	funcOf := func(n *analysis.Node) uint32 {
		if n.Func != 0 && int(n.Func) < len(canon) {
			return canon[n.Func]
		}
		return unknown
	}
	type line struct {
		funcs []uint32 // the chain's innermost functions, canon
		self  int64
	}
	lines := map[uint64][]*line{}
	var all []*line
	hash := newWindowHash()
	p.WalkPaths(func(path []*analysis.Node) {
		h := hash.next(path, funcOf)
		n := path[len(path)-1]
		if n.Self <= 0 {
			return
		}
		inner, c := innermost(path)
		if c {
			cut++
		}
	find:
		for _, l := range lines[h] {
			if len(l.funcs) != len(inner) {
				continue
			}
			for i, a := range inner {
				if l.funcs[i] != funcOf(a) {
					continue find
				}
			}
			l.self += n.Self
			return
		}
		l := &line{funcs: make([]uint32, len(inner)), self: n.Self}
		for i, a := range inner {
			l.funcs[i] = funcOf(a)
		}
		lines[h] = append(lines[h], l)
		all = append(all, l)
	})
	text := make([]string, len(all))
	var b []byte
	for i, l := range all {
		b = b[:0]
		for j, id := range l.funcs {
			if j > 0 {
				b = append(b, ';')
			}
			b = append(b, name(id)...)
		}
		b = strconv.AppendInt(append(b, ' '), l.self, 10)
		text[i] = string(b)
	}
	sort.Strings(text)
	bw := bufio.NewWriter(w)
	for _, l := range text {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	return cut, bw.Flush()
}

// Profile builds a pprof profile: for each chain and goroutine, the calls
// and their self time, labelled with the goroutine (past the first
// analysis.MaxShares goroutines of a chain, one sample for the others,
// labelled goroutines="past the first 1000 of the chain"); for each chain and
// error its calls failed with (not an end: tracefile.Ends), how many, in a
// third sample type, errors,
// labelled with the error ("*fs.PathError: open x: no such file"), so
// that pprof -sample_index=errors -tagfocus error=... works. pprof
// derives cumulative time itself, counting recursion once. p must be analysed
// with Options.ByGoroutine. It returns how many chains it cut to their
// innermost MaxStack calls.
func Profile(p *analysis.Profile) (*profile.Profile, int) {
	prof := header(p)
	cut := samples(p, prof, func(s *profile.Sample) { prof.Sample = append(prof.Sample, s) })
	return prof, cut
}

// header returns the pprof profile of p without samples.
func header(p *analysis.Profile) *profile.Profile {
	return &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "calls", Unit: "count"}, {Type: "wall", Unit: "nanoseconds"}, {Type: "errors", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "wall", Unit: "nanoseconds"},
		// pprof shows the last sample type unless told: wall time, as
		// report shows it.
		DefaultSampleType: "wall",
		Period:            1,
		DurationNanos:     int64(p.Duration),
	}
}

// samples makes Profile's samples of p, giving each to emit, and adds to
// prof the functions and locations they point at. A sample of a stack
// that chains share (see below) is given once the walk is over, when
// every chain has added to it; any other at once, so that Pprof can
// write it and let it go. It returns how many chains it cut.
func samples(p *analysis.Profile, prof *profile.Profile, emit func(*profile.Sample)) int {
	// A function's location, by its id; ids past the trace's table, all
	// named "?", in a map.
	locs := make([]*profile.Location, len(p.FuncTable)+1)
	past := map[uint32]*profile.Location{}
	loc := func(id uint32) *profile.Location {
		var l *profile.Location
		if int(id) < len(locs) {
			l = locs[id]
		} else {
			l = past[id]
		}
		if l != nil {
			return l
		}
		fn := &profile.Function{ID: uint64(len(prof.Function) + 1), Name: p.Name(id), SystemName: p.Name(id)}
		prof.Function = append(prof.Function, fn)
		l = &profile.Location{ID: uint64(len(prof.Location) + 1), Line: []profile.Line{{Function: fn}}}
		prof.Location = append(prof.Location, l)
		if int(id) < len(locs) {
			locs[id] = l
		} else {
			past[id] = l
		}
		return l
	}
	// A chain's samples share its stack. Chains cut to their innermost
	// MaxStack calls can meet, as every level of a deep recursion does,
	// and meet a chain of MaxStack calls: such chains share samples too,
	// by label, or a million-deep recursion would make a million samples
	// of MaxStack locations each. Shorter chains cannot meet, and need no
	// lookup for a goroutine's sample.
	type label struct {
		kind byte // 'g' a goroutine's, 'o' the others', 'e' an error's
		g    uint64
		err  string
	}
	type stack struct {
		funcs []uint32            // a shared stack's functions, leaf last
		locs  []*profile.Location // leaf first
		by    map[label]*profile.Sample
	}
	var st *stack
	var shared []*profile.Sample // samples of shared stacks, in the order made
	add := func(l label, lookup bool, s *profile.Sample) {
		s.Location = st.locs
		if !lookup {
			emit(s)
			return
		}
		if have := st.by[l]; have != nil {
			for i, v := range s.Value {
				have.Value[i] += v
			}
			return
		}
		if st.by == nil {
			st.by = map[label]*profile.Sample{}
		}
		st.by[l] = s
		shared = append(shared, s)
	}
	met := map[uint64][]*stack{} // shared stacks, by hash
	// A goroutine's label, shared by its samples: one map each, not one
	// per sample.
	byG := map[uint64]map[string][]int64{}
	others := map[string][]string{"goroutines": {otherGoroutines}}
	hash := newWindowHash()
	cut := 0
	p.WalkPaths(func(path []*analysis.Node) {
		h := hash.next(path, func(n *analysis.Node) uint32 { return n.Func })
		n := path[len(path)-1]
		if n.ByGoroutine == nil {
			return
		}
		path, c := innermost(path)
		if c {
			cut++
		}
		isShared := len(path) == MaxStack
		st = nil
		if isShared {
		find:
			for _, s := range met[h] {
				for i, a := range path {
					if s.funcs[i] != a.Func {
						continue find
					}
				}
				st = s
				break
			}
		}
		if st == nil {
			st = &stack{locs: make([]*profile.Location, len(path))}
			for i, a := range path {
				st.locs[len(path)-1-i] = loc(a.Func)
			}
			if isShared {
				st.funcs = make([]uint32, len(path))
				for i, a := range path {
					st.funcs[i] = a.Func
				}
				met[h] = append(met[h], st)
			}
		}
		for _, sh := range n.ByGoroutine.Each {
			m := byG[sh.G]
			if m == nil {
				m = map[string][]int64{"goroutine": {int64(sh.G)}}
				byG[sh.G] = m
			}
			add(label{kind: 'g', g: sh.G}, isShared, &profile.Sample{Value: []int64{int64(sh.Calls), sh.Self, 0}, NumLabel: m})
		}
		if sh := n.ByGoroutine.Others; sh.Calls > 0 {
			add(label{kind: 'o'}, isShared, &profile.Sample{Value: []int64{int64(sh.Calls), sh.Self, 0}, Label: others})
		}
		ids := make([]uint32, 0, len(n.ErrorIDs))
		for id := range n.ErrorIDs {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			if !p.Failed(id) {
				continue // an end, such as io.EOF: not a failure, as report counts
			}
			msg := p.Error(id).String()
			add(label{kind: 'e', err: msg}, true, &profile.Sample{
				Value: []int64{0, 0, int64(n.ErrorIDs[id])},
				Label: map[string][]string{"error": {msg}},
			})
		}
	})
	for _, s := range shared {
		emit(s)
	}
	return cut
}

// otherGoroutines labels the samples of the goroutines past the first
// analysis.MaxShares of a chain, which share one.
var otherGoroutines = fmt.Sprintf("past the first %d of the chain", analysis.MaxShares)

// Pprof writes the gzipped profile.proto of p, and returns how many
// chains it cut to their innermost MaxStack calls.
func Pprof(w io.Writer, p *analysis.Profile) (int, error) {
	// Compressed as the Go runtime compresses its own profiles, for
	// speed: of a 750 KB profile, encoding took 16 ms, then the default
	// level 12 ms more, this one 4 ms (for a file of 120 KB, not 85).
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	e := newEncoder(zw)
	prof := header(p)
	cut := samples(p, prof, e.sample)
	if err := prof.CheckValid(); err != nil { // all but the samples, made valid
		return cut, err
	}
	if err := e.finish(prof); err != nil {
		return cut, err
	}
	return cut, zw.Close()
}

// MaxCalls is the number of calls past which Chrome and Speedscope refuse
// to write: their viewers fail on files of a few hundred megabytes, which
// 2 million calls make, and the calls are held in memory to be ordered.
const MaxCalls = 2_000_000

// maxCalls is MaxCalls, made small by tests.
var maxCalls uint64 = MaxCalls

// ErrTooBig says an export would be too large for its viewers: it would
// hold more than Limit calls. Reading stops there, so that a trace of
// a hundred million calls is refused in the time its first two million
// take; InTrace, when the caller knows it, is how many calls the whole
// trace holds.
type ErrTooBig struct {
	Limit, InTrace uint64
	Format         string
}

func (e *ErrTooBig) Error() string {
	of := ""
	if e.InTrace > 0 {
		of = fmt.Sprintf(" (the trace holds %d)", e.InTrace)
	}
	return fmt.Sprintf("more than %d calls%s are too many for %s viewers: narrow the trace with -g, -F, -N, -D or -t, or export pprof or folded stacks", e.Limit, of, e.Format)
}

// call is one call, for the time-ordered formats.
type call struct {
	g          uint64
	fn         uint32
	start, end int64
	held       int64 // time held up by the trace writer, within start to end
	kind       tracefile.ExitKind
	depth      int
	err        uint32 // the error it returned, 0 for none
}

// calls reads the calls f selects from r, in order of their end within
// each goroutine, leaving out calls nested deeper than MaxStack and
// counting those. Past maxCalls it stops, keeping none, and returns an
// ErrTooBig.
func calls(r *tracefile.Reader, f *filter.Filter, format string) (out []call, cut int, err error) {
	if f == nil {
		f = &filter.Filter{}
	}
	sel := f.Selector(func(id uint32) string { return r.Func(id).Name })
	var n uint64 // calls selected
	var ev tracefile.Event
	for {
		err := r.Read(&ev)
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return out, cut, err
		}
		switch ev.Kind {
		case tracefile.EnterEvent:
			sel.Enter(ev.G, ev.Func, ev.Time)
		case tracefile.ExitEvent:
			if !sel.Exit(ev.G, ev.Duration()) {
				continue
			}
			if ev.Depth > MaxStack {
				cut++
				continue
			}
			if n++; n > maxCalls {
				return nil, cut, &ErrTooBig{Limit: maxCalls, Format: format}
			}
			out = append(out, call{g: ev.G, fn: ev.Func, start: ev.Start, end: ev.Time, held: ev.Held, kind: ev.Exit, depth: ev.Depth, err: ev.Err})
		}
	}
}

// Chrome writes the calls of r as Trace Event JSON: one complete ("X")
// event per call, a thread per goroutine named by thread_name metadata.
// A call that returned an error has the status "error" and the error in
// its args, and is coloured as failed where the viewer colours by cname.
// Perfetto and chrome://tracing open it. It returns how many calls nested
// deeper than MaxStack it left out. Of a damaged trace it writes the calls
// before the damage, and returns the error that stopped reading.
func Chrome(w io.Writer, r *tracefile.Reader, f *filter.Filter) (int, error) {
	cs, cut, readErr := calls(r, f, "Chrome")
	if readErr != nil && !tracefile.IsIncomplete(readErr) {
		return cut, readErr
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"displayTimeUnit":"ns","traceEvents":[`)
	first := true
	sep := func() {
		if !first {
			bw.WriteByte(',')
		}
		first = false
		bw.WriteByte('\n')
	}
	program, _ := json.Marshal(r.Meta().Program)
	sep()
	fmt.Fprintf(bw, `{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":%s}}`, program)
	named := map[uint64]bool{}
	for _, c := range cs {
		if !named[c.g] {
			named[c.g] = true
			sep()
			fmt.Fprintf(bw, `{"ph":"M","name":"thread_name","pid":1,"tid":%d,"args":{"name":"g%d"}}`, c.g, c.g)
		}
		name, _ := json.Marshal(r.Func(c.fn).Name)
		sep()
		fmt.Fprintf(bw, `{"ph":"X","name":%s,"pid":1,"tid":%d,"ts":%s,"dur":%s`, name, c.g, micros(c.start), micros(c.end-c.start))
		// The event lasts as the call did; its args say how long of it
		// the trace writer held the goroutine up.
		var args []string
		if c.err != 0 {
			e := r.Error(c.err)
			typ, _ := json.Marshal(e.Type)
			msg, _ := json.Marshal(e.Message)
			if e.End() {
				// io.EOF and the like end a call without its failing,
				// as report counts them.
				args = append(args, `"end.type":`+string(typ)+`,"end.message":`+string(msg))
			} else {
				bw.WriteString(`,"cname":"terrible"`)
				args = append(args, `"status":"error","error.type":`+string(typ)+`,"error.message":`+string(msg))
			}
		}
		if c.kind != tracefile.Return {
			args = append(args, `"exit":"`+c.kind.String()+`"`)
		}
		if c.held > 0 {
			args = append(args, `"held_up_us":`+micros(c.held))
		}
		if len(args) > 0 {
			bw.WriteString(`,"args":{` + strings.Join(args, ",") + `}`)
		}
		bw.WriteByte('}')
	}
	bw.WriteString("\n]}\n")
	if err := bw.Flush(); err != nil {
		return cut, err
	}
	return cut, readErr
}

// micros formats nanoseconds as microseconds, exactly.
func micros(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1000, 'f', -1, 64)
}

// Speedscope writes the calls of r in speedscope's file format: one
// evented profile per goroutine, frames shared. It returns how many calls
// nested deeper than MaxStack it left out, and, as Chrome does, the error
// that stopped reading a damaged trace after writing what came before.
func Speedscope(w io.Writer, r *tracefile.Reader, f *filter.Filter) (int, error) {
	cs, cut, readErr := calls(r, f, "speedscope")
	if readErr != nil && !tracefile.IsIncomplete(readErr) {
		return cut, readErr
	}
	type event struct {
		Type  string `json:"type"`
		At    int64  `json:"at"`
		Frame int    `json:"frame"`
	}
	type prof struct {
		Type       string  `json:"type"`
		Name       string  `json:"name"`
		Unit       string  `json:"unit"`
		StartValue int64   `json:"startValue"`
		EndValue   int64   `json:"endValue"`
		Events     []event `json:"events"`
	}
	frames := []map[string]string{}
	frameOf := map[uint32]int{}
	frame := func(id uint32) int {
		if i, ok := frameOf[id]; ok {
			return i
		}
		fn := r.Func(id)
		frames = append(frames, map[string]string{"name": fn.Name, "file": fn.File})
		frameOf[id] = len(frames) - 1
		return frameOf[id]
	}
	// The document is written as encoding/json writes a map, keys in
	// order, but a goroutine at a time: a document of a million calls
	// would otherwise be held whole, and its events twice.
	bw := bufio.NewWriter(w)
	name, _ := json.Marshal(r.Meta().Program)
	bw.WriteString(`{"$schema":"https://www.speedscope.app/file-format-schema.json","activeProfileIndex":0,"exporter":"calltrail","name":`)
	bw.Write(name)
	bw.WriteString(`,"profiles":[`)
	// Each goroutine's calls in the order they began, the outer first
	// of two that began at once.
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].g != cs[j].g {
			return cs[i].g < cs[j].g
		}
		if cs[i].start != cs[j].start {
			return cs[i].start < cs[j].start
		}
		return cs[i].depth < cs[j].depth
	})
	var events []event
	first := true
	for len(cs) > 0 {
		n := 1
		for n < len(cs) && cs[n].g == cs[0].g {
			n++
		}
		gc := cs[:n]
		cs = cs[n:]
		p := prof{Type: "evented", Name: fmt.Sprintf("g%d", gc[0].g), Unit: "nanoseconds", StartValue: gc[0].start, Events: events[:0]}
		var open []call
		closeUntil := func(t int64, all bool) {
			for len(open) > 0 && (all || open[len(open)-1].end <= t) {
				c := open[len(open)-1]
				open = open[:len(open)-1]
				at := c.end
				if len(p.Events) > 0 && at < p.Events[len(p.Events)-1].At {
					at = p.Events[len(p.Events)-1].At // clock jitter must not go back
				}
				p.Events = append(p.Events, event{"C", at, frame(c.fn)})
			}
		}
		for _, c := range gc {
			closeUntil(c.start, false)
			at := c.start
			if len(p.Events) > 0 && at < p.Events[len(p.Events)-1].At {
				at = p.Events[len(p.Events)-1].At
			}
			p.Events = append(p.Events, event{"O", at, frame(c.fn)})
			open = append(open, c)
		}
		closeUntil(0, true)
		p.EndValue = p.Events[len(p.Events)-1].At
		data, err := json.Marshal(p)
		if err != nil {
			return cut, err
		}
		if !first {
			bw.WriteByte(',')
		}
		first = false
		bw.Write(data)
		events = p.Events // reused by the next goroutine
	}
	bw.WriteString(`],"shared":{"frames":`)
	data, err := json.Marshal(frames)
	if err != nil {
		return cut, err
	}
	bw.Write(data)
	bw.WriteString("}}\n")
	if err := bw.Flush(); err != nil {
		return cut, err
	}
	return cut, readErr
}
