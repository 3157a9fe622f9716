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

// Folded writes one line per chain with self time, "root;...;leaf NS",
// as flamegraph.pl reads them. The values add up to the traced time.
func Folded(w io.Writer, p *analysis.Profile) error {
	bw := bufio.NewWriter(w)
	var lines []string
	p.Walk(func(n *analysis.Node) {
		if n.Self <= 0 {
			return
		}
		var names []string
		for _, id := range n.Path() {
			names = append(names, strings.ReplaceAll(p.Names(id), ";", ":"))
		}
		lines = append(lines, strings.Join(names, ";")+" "+strconv.FormatInt(n.Self, 10))
	})
	sort.Strings(lines)
	for _, l := range lines {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Profile builds a pprof profile: for each chain and goroutine, the calls
// and their self time, labelled with the goroutine. pprof derives
// cumulative time itself, counting recursion once. p must be analysed
// with Options.ByGoroutine.
func Profile(p *analysis.Profile) *profile.Profile {
	prof := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "calls", Unit: "count"}, {Type: "wall", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "wall", Unit: "nanoseconds"},
		Period:        1,
		DurationNanos: int64(p.Duration),
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
	p.Walk(func(n *analysis.Node) {
		path := n.Path()
		stack := make([]*profile.Location, len(path))
		for i, id := range path {
			stack[len(path)-1-i] = loc(id) // leaf first
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
				Value:    []int64{int64(sh.Calls), sh.Self},
				NumLabel: map[string][]int64{"goroutine": {int64(g)}},
			})
		}
	})
	return prof
}

// Pprof writes the gzipped profile.proto of p.
func Pprof(w io.Writer, p *analysis.Profile) error {
	prof := Profile(p)
	if err := prof.CheckValid(); err != nil {
		return err
	}
	return prof.Write(w)
}

// ChromeLimit is the number of calls past which Chrome refuses to write:
// its viewers fail on files of a few hundred megabytes.
const ChromeLimit = 2_000_000

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
	kind       tracefile.ExitKind
	depth      int
}

// calls reads the calls f selects from r, in order of their end within
// each goroutine, refusing past limit.
func calls(r *tracefile.Reader, f *filter.Filter, limit uint64, format string) ([]call, error) {
	if f == nil {
		f = &filter.Filter{}
	}
	trackers := map[uint64]*filter.Tracker{}
	shown := map[uint64][]bool{}
	var out []call
	name := func(id uint32) string { return r.Func(id).Name }
	for {
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return out, err
		}
		if !f.Goroutine(ev.G) {
			continue
		}
		tr := trackers[ev.G]
		if tr == nil {
			tr = f.NewTracker()
			trackers[ev.G] = tr
		}
		switch ev.Kind {
		case tracefile.EnterEvent:
			s, _ := tr.Enter(ev.Func, name)
			shown[ev.G] = append(shown[ev.G], s && f.InWindow(ev.Time))
		case tracefile.ExitEvent:
			tr.Exit()
			st := shown[ev.G]
			if len(st) == 0 {
				continue
			}
			s := st[len(st)-1]
			shown[ev.G] = st[:len(st)-1]
			if !s || !f.Long(ev.Duration()) {
				continue
			}
			if uint64(len(out)) >= limit {
				return nil, &ErrTooBig{Calls: uint64(len(out)) + 1, Limit: limit, Format: format}
			}
			out = append(out, call{g: ev.G, fn: ev.Func, start: ev.Start, end: ev.Time, kind: ev.Exit, depth: ev.Depth})
		}
	}
}

// Chrome writes the calls of r as Trace Event JSON: one complete ("X")
// event per call, a thread per goroutine named by thread_name metadata.
// Perfetto and chrome://tracing open it.
func Chrome(w io.Writer, r *tracefile.Reader, f *filter.Filter) error {
	cs, err := calls(r, f, ChromeLimit, "Chrome")
	if err != nil {
		return err
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
		if c.kind != tracefile.Return {
			fmt.Fprintf(bw, `,"args":{"exit":%q}`, c.kind.String())
		}
		bw.WriteByte('}')
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// micros formats nanoseconds as microseconds, exactly.
func micros(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1000, 'f', -1, 64)
}

// Speedscope writes the calls of r in speedscope's file format: one
// evented profile per goroutine, frames shared.
func Speedscope(w io.Writer, r *tracefile.Reader, f *filter.Filter) error {
	cs, err := calls(r, f, 50_000_000, "speedscope")
	if err != nil {
		return err
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
		return err
	}
	return bw.Flush()
}
