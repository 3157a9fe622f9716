package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/tracefile"
	"github.com/google/pprof/profile"
)

// MaxStack is how deep the exports go, as Go's own profiler cuts its
// stacks (at 128 frames, GODEBUG=profstackdepth's default): pprof and
// folded stacks keep the innermost MaxStack calls of a deeper chain, and
// speedscope and Chrome leave out calls nested deeper. Viewers of whole
// stacks would otherwise get a copy of a deep recursion's stack per call
// in it.
const MaxStack = 128

// innermost returns the last MaxStack nodes of path, and whether it cut
// any.
func innermost(path []*analysis.Node) ([]*analysis.Node, bool) {
	if len(path) > MaxStack {
		return path[len(path)-MaxStack:], true
	}
	return path, false
}

// Folded writes one line per chain with self time, "root;...;leaf NS",
// as flamegraph.pl reads them; the values add up to the traced time. It
// returns how many chains it cut to their innermost MaxStack calls.
func Folded(w io.Writer, p *analysis.Profile) (cut int, err error) {
	bw := bufio.NewWriter(w)
	self := map[string]int64{} // chains cut short can meet
	p.WalkPaths(func(path []*analysis.Node) {
		n := path[len(path)-1]
		if n.Self <= 0 {
			return
		}
		path, c := innermost(path)
		if c {
			cut++
		}
		var b strings.Builder
		for i, a := range path {
			if i > 0 {
				b.WriteByte(';')
			}
			b.WriteString(strings.ReplaceAll(p.Names(a.Func), ";", ":"))
		}
		self[b.String()] += n.Self
	})
	lines := make([]string, 0, len(self))
	for k, v := range self {
		lines = append(lines, k+" "+strconv.FormatInt(v, 10))
	}
	sort.Strings(lines)
	for _, l := range lines {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	return cut, bw.Flush()
}

// Profile builds a pprof profile: for each chain and goroutine, the calls
// and their self time, labelled with the goroutine; for each chain and
// error its calls returned, how many, in a third sample type, errors,
// labelled with the error ("*fs.PathError: open x: no such file"), so
// that pprof -sample_index=errors -tagfocus error=... works. pprof
// derives cumulative time itself, counting recursion once. p must be analysed
// with Options.ByGoroutine. It returns how many chains it cut to their
// innermost MaxStack calls.
func Profile(p *analysis.Profile) (*profile.Profile, int) {
	prof := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "calls", Unit: "count"}, {Type: "wall", Unit: "nanoseconds"}, {Type: "errors", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "wall", Unit: "nanoseconds"},
		// pprof shows the last sample type unless told: wall time, as
		// report shows it.
		DefaultSampleType: "wall",
		Period:            1,
		DurationNanos:     int64(p.Duration),
	}
	locs := map[uint32]*profile.Location{}
	loc := func(id uint32) *profile.Location {
		if l, ok := locs[id]; ok {
			return l
		}
		fn := &profile.Function{ID: uint64(len(prof.Function) + 1), Name: p.Names(id), SystemName: p.Names(id)}
		prof.Function = append(prof.Function, fn)
		l := &profile.Location{ID: uint64(len(prof.Location) + 1), Line: []profile.Line{{Function: fn}}}
		prof.Location = append(prof.Location, l)
		locs[id] = l
		return l
	}
	cut := 0
	p.WalkPaths(func(path []*analysis.Node) {
		n := path[len(path)-1]
		if len(n.ByGoroutine) == 0 {
			return
		}
		path, c := innermost(path)
		if c {
			cut++
		}
		stack := make([]*profile.Location, len(path))
		for i, a := range path {
			stack[len(path)-1-i] = loc(a.Func) // leaf first
		}
		gs := make([]uint64, 0, len(n.ByGoroutine))
		for g := range n.ByGoroutine {
			gs = append(gs, g)
		}
		sort.Slice(gs, func(i, j int) bool { return gs[i] < gs[j] })
		for _, g := range gs {
			sh := n.ByGoroutine[g]
			prof.Sample = append(prof.Sample, &profile.Sample{
				Location: stack,
				Value:    []int64{int64(sh.Calls), sh.Self, 0},
				NumLabel: map[string][]int64{"goroutine": {int64(g)}},
			})
		}
		ids := make([]uint32, 0, len(n.ErrorIDs))
		for id := range n.ErrorIDs {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			e := p.Error(id)
			prof.Sample = append(prof.Sample, &profile.Sample{
				Location: stack,
				Value:    []int64{0, 0, int64(n.ErrorIDs[id])},
				Label:    map[string][]string{"error": {e.Type + ": " + e.Message}},
			})
		}
	})
	return prof, cut
}

// Pprof writes the gzipped profile.proto of p, and returns how many
// chains it cut to their innermost MaxStack calls.
func Pprof(w io.Writer, p *analysis.Profile) (int, error) {
	prof, cut := Profile(p)
	if err := prof.CheckValid(); err != nil {
		return cut, err
	}
	return cut, prof.Write(w)
}

// MaxCalls is the number of calls past which Chrome and Speedscope refuse
// to write: their viewers fail on files of a few hundred megabytes, which
// 2 million calls make, and the calls are held in memory to be ordered.
const MaxCalls = 2_000_000

// maxCalls is MaxCalls, made small by tests.
var maxCalls uint64 = MaxCalls

// ErrTooBig says an export would be too large for its viewers.
type ErrTooBig struct {
	Calls, Limit uint64
	Format       string
}

func (e *ErrTooBig) Error() string {
	return fmt.Sprintf("%d calls are too many for %s viewers (limit %d): narrow the trace with -g, -F, -N, -D or -t, or export pprof or folded stacks", e.Calls, e.Format, e.Limit)
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
// counting those. Past maxCalls it keeps none, reads on to count them
// all, and returns an ErrTooBig that says how many there are.
func calls(r *tracefile.Reader, f *filter.Filter, format string) (out []call, cut int, err error) {
	if f == nil {
		f = &filter.Filter{}
	}
	sel := f.Selector(func(id uint32) string { return r.Func(id).Name })
	var n uint64 // calls selected
	for {
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			if n > maxCalls {
				return nil, cut, &ErrTooBig{Calls: n, Limit: maxCalls, Format: format}
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
				out = nil // too many: only counted, to say how many
				continue
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
	program, _ := json.Marshal(r.Meta()["program"])
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
			bw.WriteString(`,"cname":"terrible"`)
			args = append(args, `"status":"error","error.type":`+string(typ)+`,"error.message":`+string(msg))
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
	byG := map[uint64][]call{}
	var gs []uint64
	for _, c := range cs {
		if _, ok := byG[c.g]; !ok {
			gs = append(gs, c.g)
		}
		byG[c.g] = append(byG[c.g], c)
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i] < gs[j] })
	var profiles []prof
	for _, g := range gs {
		gc := byG[g]
		// Calls come in order of their end; opening order is by start,
		// outer calls first.
		sort.SliceStable(gc, func(i, j int) bool {
			if gc[i].start != gc[j].start {
				return gc[i].start < gc[j].start
			}
			return gc[i].depth < gc[j].depth
		})
		p := prof{Type: "evented", Name: fmt.Sprintf("g%d", g), Unit: "nanoseconds", StartValue: gc[0].start}
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
		profiles = append(profiles, p)
	}
	doc := map[string]any{
		"$schema":            "https://www.speedscope.app/file-format-schema.json",
		"shared":             map[string]any{"frames": frames},
		"profiles":           profiles,
		"name":               r.Meta()["program"],
		"exporter":           "calltrail",
		"activeProfileIndex": 0,
	}
	if profiles == nil {
		doc["profiles"] = []prof{}
	}
	bw := bufio.NewWriter(w)
	if err := json.NewEncoder(bw).Encode(doc); err != nil {
		return cut, err
	}
	if err := bw.Flush(); err != nil {
		return cut, err
	}
	return cut, readErr
}
