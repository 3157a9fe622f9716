package oracle

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/export"
	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/replay"
	"github.com/calltrail/calltrail/tracefile"
)

// maxReport bounds the disagreements Check returns: one wrong figure
// tends to make many.
const maxReport = 20

// fn is what the events say of one function.
type fn struct {
	deep     uint64 // calls on paths too deep to fold one by one
	calls    uint64
	outer    int64 // time in calls not inside another call of it
	max      int64
	errors   uint64
	panics   uint64
	callers  map[string]uint64 // calls by caller ("" for a goroutine's first)
	callees  map[string]uint64 // calls it made, by callee
	paths    map[int32]uint64  // calls by path
	negative bool
}

// maxDepth bounds the paths whose chains are checked one by one: folding
// each path of a deep recursion alone would be quadratic.
const maxDepth = 512

// events reads the trace's calls as they happened.
type events struct {
	fns      map[string]*fn
	top      int64 // time in goroutines' outermost calls
	duration int64
	// longest is the most a call can last: the trace's duration or, in
	// a snapshot, from its window's start to the last event, since the
	// calls open at that start count from it.
	longest int64
	// The distinct paths of calls, as a tree: each path's parent and
	// last function.
	parent []int32
	name   []string
	kids   map[pathKey]int32
}

type pathKey struct {
	parent int32
	name   string
}

// path returns the path whose parent is p and last function name.
func (ev *events) path(p int32, name string) int32 {
	k, ok := ev.kids[pathKey{p, name}]
	if !ok {
		k = int32(len(ev.parent))
		ev.parent = append(ev.parent, p)
		ev.name = append(ev.name, name)
		ev.kids[pathKey{p, name}] = k
	}
	return k
}

// names returns path k's functions, outermost first.
func (ev *events) names(k int32) []string {
	var out []string
	for ; k > 0; k = ev.parent[k] {
		out = append(out, ev.name[k])
	}
	slices.Reverse(out)
	return out
}

// each reads every event of the trace data, and calls f with each and
// the reader, which tells its names; it returns the reader at the end.
func each(data []byte, f func(r *tracefile.Reader, e tracefile.Event)) (*tracefile.Reader, error) {
	r, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			return r, nil
		}
		if err != nil {
			return nil, err
		}
		f(r, e)
	}
}

func readEvents(data []byte) (*events, error) {
	ev := &events{fns: map[string]*fn{}, parent: []int32{-1}, name: []string{""}, kids: map[pathKey]int32{}}
	stacks := map[uint64][]string{}
	paths := map[uint64][]int32{}
	open := map[uint64]map[string]int{}
	r, err := each(data, func(r *tracefile.Reader, e tracefile.Event) {
		switch e.Kind {
		case tracefile.EnterEvent:
			name := r.Func(e.Func).Name
			p := int32(0)
			if ps := paths[e.G]; len(ps) > 0 {
				p = ps[len(ps)-1]
			}
			paths[e.G] = append(paths[e.G], ev.path(p, name))
			stacks[e.G] = append(stacks[e.G], name)
			if open[e.G] == nil {
				open[e.G] = map[string]int{}
			}
			open[e.G][name]++
		case tracefile.ExitEvent:
			st := stacks[e.G]
			if len(st) == 0 {
				return
			}
			name := st[len(st)-1]
			f := ev.fns[name]
			if f == nil {
				f = ev.fn(name)
				ev.fns[name] = f
			}
			d := int64(e.Duration())
			f.calls++
			f.max = max(f.max, d)
			f.negative = f.negative || d < 0
			open[e.G][name]--
			if open[e.G][name] == 0 {
				f.outer += d
			}
			if e.Err != 0 && !r.Error(e.Err).End() {
				f.errors++ // a failure: the end of input is none
			}
			if e.Exit == tracefile.Panic {
				f.panics++
			}
			caller := ""
			if len(st) > 1 {
				caller = st[len(st)-2]
				ev.fns[caller] = ev.fn(caller)
				ev.fns[caller].callees[name]++
			} else {
				ev.top += d
			}
			f.callers[caller]++
			if len(st) > maxDepth {
				f.deep++
			} else {
				f.paths[paths[e.G][len(st)-1]]++
			}
			stacks[e.G] = st[:len(st)-1]
			paths[e.G] = paths[e.G][:len(st)-1]
		}
	})
	if err != nil {
		return nil, err
	}
	ev.duration, ev.longest = r.MaxTime(), r.MaxTime()
	if m := r.Meta(); m.Snapshot() {
		ev.longest -= int64(m.Window.Start)
	}
	return ev, nil
}

func (ev *events) fn(name string) *fn {
	if f := ev.fns[name]; f != nil {
		return f
	}
	return &fn{callers: map[string]uint64{}, callees: map[string]uint64{}, paths: map[int32]uint64{}}
}

// Check reads the trace data, named name in what it returns, with every
// view, and returns their disagreements.
func Check(name string, data []byte) []error {
	c := &checker{name: name}
	c.check(data)
	return c.errs
}

type checker struct {
	name string
	errs []error
}

func (c *checker) errorf(views, format string, args ...any) {
	if len(c.errs) < maxReport {
		c.errs = append(c.errs, fmt.Errorf("%s: %s disagree: %s", c.name, views, fmt.Sprintf(format, args...)))
	}
}

func (c *checker) check(data []byte) {
	ev, err := readEvents(data)
	if err != nil {
		c.errorf("reader", "%v", err)
		return
	}
	r, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		c.errorf("reader", "%v", err)
		return
	}
	p := analysis.Analyze(r, analysis.Options{Slowest: 3, ByGoroutine: true})
	if p.Err != nil {
		c.errorf("analysis", "%v", p.Err)
		return
	}
	if err := p.CheckValid(); err != nil {
		c.errorf("the model", "%v", err)
	}
	t := query.New(c.name, p)
	if end := p.Meta.Window.End; p.Meta.Snapshot() && p.Duration > end+time.Millisecond {
		c.errorf("the snapshot's window and its calls", "the window ends at %v, its calls at %v", end, p.Duration)
	}
	c.replay(data, ev)
	c.report(t, ev)
	if r, err := tracefile.NewReader(bytes.NewReader(data)); err == nil {
		s, err := tracefile.Summarize(r)
		if err == nil && s.Called != len(t.Functions("calls", 0)) {
			c.errorf("info and report", "info counts %d functions called, report lists %d", s.Called, len(t.Functions("calls", 0)))
		}
		// info reads the summary a trace ends with, when it has one,
		// instead of its events.
		if sum, ok, _ := tracefile.ReadSummary(bytes.NewReader(data), int64(len(data))); ok && err == nil && !reflect.DeepEqual(sum, s) {
			c.errorf("info and info --scan", "the trace's summary says %+v, its events %+v", sum, s)
		}
	}
	c.chains(t, ev)
	c.functionPages(t, ev)
	c.flame(p, ev)
	c.goroutines(t, ev)
	c.filtered(data, ev)
}

// maxFiltered bounds the calls of the traces filtered checks: each
// analyses the trace four times more.
const maxFiltered = 1 << 20

// filtered: with a focus on a function, or a time window, report counts
// the calls the filter shows, and each function's total is the time of
// those not inside another shown call of it, whatever its calls around
// them that the filter leaves out.
func (c *checker) filtered(data []byte, ev *events) {
	var calls uint64
	for _, f := range ev.fns {
		calls += f.calls
	}
	if calls > maxFiltered {
		return
	}
	var names []string
	for name := range ev.fns {
		names = append(names, name)
	}
	slices.Sort(names)
	var fs []*filter.Filter
	for _, name := range names[:min(len(names), 3)] {
		fs = append(fs, &filter.Filter{Focus: regexp.MustCompile("^" + regexp.QuoteMeta(name) + "$")})
	}
	if ev.duration > 2 {
		fs = append(fs, &filter.Filter{From: time.Duration(ev.duration / 2)})
	}
	cs, err := readCalls(data)
	if err != nil {
		c.errorf("reader", "%v", err)
		return
	}
	for _, f := range fs {
		want, err := cs.shown(data, f)
		if err != nil {
			c.errorf("reader", "%v", err)
			return
		}
		r, err := tracefile.NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		p := analysis.Analyze(r, analysis.Options{Filter: f, Chains: query.ChainFolder})
		t := query.New(c.name, p)
		got, gotChains := map[string][2]int64{}, map[string][2]int64{}
		var ids []uint32
		for _, fn := range t.Functions("calls", 0) {
			got[fn.Name] = [2]int64{int64(fn.Calls), fn.TotalNs}
			id, err := t.Func(fn.Name)
			if err != nil {
				c.errorf("report and chains, filtered", "%s: %v", fn.Name, err)
				continue
			}
			ids = append(ids, id)
		}
		chains, _ := t.Chains(ids, 0)
		for _, ch := range chains {
			gotChains[stepsKey(ch.Path)] = [2]int64{int64(ch.Calls), ch.TotalNs}
		}
		if !maps.Equal(got, want.funcs) {
			c.errorf("report and the events, filtered", "focus %v, from %v: report's calls and totals %v, the events' %v", f.Focus, f.From, got, want.funcs)
		}
		if !maps.Equal(gotChains, want.chains) {
			c.errorf("chains and the events, filtered", "focus %v, from %v: chains' calls and totals %v, the events' %v", f.Focus, f.From, gotChains, want.chains)
		}
		if g := t.Flame(nil, false, query.Wall); g.Value[0] != want.shownTime {
			c.errorf("flame and the events, filtered", "focus %v, from %v: the flame graph holds %d ns, the calls shown %d ns", f.Focus, f.From, g.Value[0], want.shownTime)
		}
	}
}

// figures are, by function and by chain with recursion folded, the
// calls a filter shows and the time of those not inside another shown
// call of the same function (chain).
type figures struct {
	funcs, chains map[string][2]int64
	shownTime     int64 // of the shown calls not inside another shown
}

// calls are a trace's calls in the order they began, each knowing the
// calls around it that filtered figures depend on: worked out once, for
// every filter.
type calls struct {
	calls  []call
	names  []string // function names by id
	chains []string // chain keys (stepsKey) by number
}

type call struct {
	fn    uint32
	chain int32 // in calls.chains
	d     int64
	// up and upChain are the innermost call of the same function, and
	// of the same chain, around it, or -1; parent its caller, or -1.
	up, upChain, parent int32
}

// readCalls reads the calls of the trace data.
func readCalls(data []byte) (*calls, error) {
	cs := &calls{}
	folder := query.NewFolder(func(id uint32) string { return cs.names[id] })
	keys := map[int32]int32{} // chain number -> index in cs.chains
	type open struct {
		call  int32
		chain query.Folded
	}
	opened := map[uint64][]open{}
	same := map[uint64]map[uint32][]int32{}     // open calls by goroutine and function
	sameChain := map[uint64]map[int32][]int32{} // and by chain
	_, err := each(data, func(r *tracefile.Reader, e tracefile.Event) {
		switch e.Kind {
		case tracefile.EnterEvent:
			if same[e.G] == nil {
				same[e.G], sameChain[e.G] = map[uint32][]int32{}, map[int32][]int32{}
			}
			for int(e.Func) >= len(cs.names) {
				cs.names = append(cs.names, r.Func(uint32(len(cs.names))).Name)
			}
			c := call{fn: e.Func, up: -1, upChain: -1, parent: -1}
			if st := same[e.G][e.Func]; len(st) > 0 {
				c.up = st[len(st)-1]
			}
			chain := folder.Empty()
			if st := opened[e.G]; len(st) > 0 {
				chain, c.parent = st[len(st)-1].chain, st[len(st)-1].call
			}
			chain = folder.Push(chain, e.Func)
			k := chain.Chain()
			key, ok := keys[k]
			if !ok {
				key = int32(len(cs.chains))
				keys[k] = key
				cs.chains = append(cs.chains, stepsKey(folder.Steps(chain, false)))
			}
			c.chain = key
			if st := sameChain[e.G][k]; len(st) > 0 {
				c.upChain = st[len(st)-1]
			}
			cs.calls = append(cs.calls, c)
			i := int32(len(cs.calls) - 1)
			opened[e.G] = append(opened[e.G], open{i, chain})
			same[e.G][e.Func] = append(same[e.G][e.Func], i)
			sameChain[e.G][k] = append(sameChain[e.G][k], i)
		case tracefile.ExitEvent:
			st := opened[e.G]
			if len(st) == 0 {
				return
			}
			top := st[len(st)-1]
			c := &cs.calls[top.call]
			c.d = int64(e.Duration())
			opened[e.G] = st[:len(st)-1]
			fs := same[e.G][c.fn]
			same[e.G][c.fn] = fs[:len(fs)-1]
			cc := sameChain[e.G][top.chain.Chain()]
			sameChain[e.G][top.chain.Chain()] = cc[:len(cc)-1]
		}
	})
	return cs, err
}

// shown returns the figures of the calls filter f shows in the trace
// data, whose calls are cs.
func (cs *calls) shown(data []byte, f *filter.Filter) (figures, error) {
	shown := make([]bool, 0, len(cs.calls))
	opened := map[uint64][]int{}
	trackers := map[uint64]*filter.Tracker{}
	name := func(id uint32) string { return cs.names[id] }
	_, err := each(data, func(r *tracefile.Reader, e tracefile.Event) {
		switch e.Kind {
		case tracefile.EnterEvent:
			tr := trackers[e.G]
			if tr == nil {
				tr = f.NewTracker()
				trackers[e.G] = tr
			}
			ok, _ := tr.Enter(e.Func, name)
			shown = append(shown, ok && f.InWindow(e.Time))
			opened[e.G] = append(opened[e.G], len(shown)-1)
		case tracefile.ExitEvent:
			st := opened[e.G]
			if len(st) == 0 {
				return
			}
			trackers[e.G].Exit()
			i := st[len(st)-1]
			shown[i] = shown[i] && f.Long(e.Duration())
			opened[e.G] = st[:len(st)-1]
		}
	})
	if err != nil {
		return figures{}, err
	}
	// around[i]: a call of the same function (chain, any) around call i
	// is shown. Calls come in the order they began, those around first.
	around := make([]bool, len(cs.calls))
	aroundChain := make([]bool, len(cs.calls))
	aroundAny := make([]bool, len(cs.calls))
	out := figures{funcs: map[string][2]int64{}, chains: map[string][2]int64{}}
	for i, c := range cs.calls {
		if c.up >= 0 {
			around[i] = shown[c.up] || around[c.up]
		}
		if c.upChain >= 0 {
			aroundChain[i] = shown[c.upChain] || aroundChain[c.upChain]
		}
		if c.parent >= 0 {
			aroundAny[i] = shown[c.parent] || aroundAny[c.parent]
		}
		if !shown[i] {
			continue
		}
		if !aroundAny[i] {
			out.shownTime += c.d
		}
		v, w := out.funcs[cs.names[c.fn]], out.chains[cs.chains[c.chain]]
		v[0]++
		w[0]++
		if !around[i] {
			v[1] += c.d
		}
		if !aroundChain[i] {
			w[1] += c.d
		}
		out.funcs[cs.names[c.fn]], out.chains[cs.chains[c.chain]] = v, w
	}
	return out, nil
}

// stepsKey writes a chain's steps without their counts: the same for
// every path folded into the chain.
func stepsKey(steps []query.Step) string {
	var b strings.Builder
	for i, s := range steps {
		if i > 0 {
			b.WriteString(" -> ")
		}
		if s.Cycle != nil {
			b.WriteString("(" + stepsKey(s.Cycle) + ")")
		} else {
			b.WriteString(s.Name)
		}
	}
	return b.String()
}

// replay: the calls it prints are the events'.
func (c *checker) replay(data []byte, ev *events) {
	r, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		return
	}
	calls := map[string]uint64{}
	out := &lines{line: func(line string) {
		_, rest, ok := strings.Cut(line, ":")
		if !ok {
			return
		}
		rest = strings.TrimLeft(rest, "\t")
		if strings.HasPrefix(rest, "[") { // a depth past replay's indents
			_, rest, _ = strings.Cut(rest, "]")
		}
		if name, ok := strings.CutPrefix(rest, "->"); ok {
			calls[name]++
		}
	}}
	if err := replay.Write(out, r, &filter.Filter{}, replay.Options{}); err != nil {
		c.errorf("replay and the reader", "replay: %v", err)
		return
	}
	for name, f := range ev.fns {
		if calls[name] != f.calls {
			c.errorf("replay and the events", "%s: replay shows %d calls, the events %d", name, calls[name], f.calls)
		}
	}
}

// report: each function's calls, outermost time and longest call are
// the events'; no time is negative or longer than the trace.
func (c *checker) report(t *query.Trace, ev *events) {
	fs := t.Functions("calls", 0)
	seen := 0
	for _, f := range fs {
		e := ev.fns[f.Name]
		if e == nil {
			c.errorf("report and the events", "report lists %s, the events have no call of it", f.Name)
			continue
		}
		seen++
		if e.negative {
			c.errorf("the events and time", "%s: a call ends before it begins", f.Name)
		}
		if f.Calls != e.calls || f.TotalNs != e.outer || f.MaxNs != e.max || f.Errors != e.errors || f.Panics != e.panics {
			c.errorf("report and the events", "%s: report %d calls, total %d, max %d, %d errors, %d panics; events %d, %d, %d, %d, %d",
				f.Name, f.Calls, f.TotalNs, f.MaxNs, f.Errors, f.Panics, e.calls, e.outer, e.max, e.errors, e.panics)
		}
		if f.SelfNs < 0 || f.SelfNs > f.TotalNs || f.MaxNs > ev.longest {
			c.errorf("report and the trace's length", "%s: self %d, total %d, max %d where a call lasts at most %d", f.Name, f.SelfNs, f.TotalNs, f.MaxNs, ev.longest)
		}
	}
	if seen != len(ev.fns) {
		c.errorf("report and the events", "report lists %d functions, the events call %d", seen, len(ev.fns))
	}
}

// chains: every chain is a path the events took, each path is in one
// chain, and their calls and times add up to the function's.
func (c *checker) chains(t *query.Trace, ev *events) {
	pf := newPathFolder(ev)
	for name, e := range ev.fns {
		id, err := t.Func(name)
		if err != nil {
			c.errorf("chains and the events", "%s: %v", name, err)
			continue
		}
		chains, _ := t.Chains([]uint32{id}, 0)
		byKey := map[string]*query.Chain{}
		var calls uint64
		for i := range chains {
			ch := &chains[i]
			byKey[query.Key(ch.Path)] = ch
			calls += ch.Calls
			if ch.TotalNs < 0 || ch.TotalNs > e.outer || ch.MaxNs > e.max || ch.MeanNs > ch.MaxNs {
				c.errorf("chains and report", "%s: chain %s has total %d, mean %d, max %d; the function's total is %d, max %d",
					name, query.Text(ch.Path, " -> "), ch.TotalNs, ch.MeanNs, ch.MaxNs, e.outer, e.max)
			}
		}
		for i := range chains {
			ch := &chains[i]
			seen := map[query.Call]bool{}
			for _, s := range ch.Slowest {
				if seen[s] {
					c.errorf("chains' slowest calls and their calls", "%s: chain %s lists a call twice: %+v", name, query.Text(ch.Path, " -> "), s)
				}
				seen[s] = true
			}
			if len(ch.Slowest) > 0 && ch.Slowest[0].DurationNs != ch.MaxNs {
				c.errorf("chains' slowest calls and their max", "%s: chain %s: slowest call %d, max %d", name, query.Text(ch.Path, " -> "), ch.Slowest[0].DurationNs, ch.MaxNs)
			}
		}
		if calls != e.calls {
			c.errorf("chains and report", "%s: its chains add up to %d calls, it has %d", name, calls, e.calls)
		}
		reached := map[*query.Chain]uint64{}
		for k, calls := range e.paths {
			names := ev.names(k)
			folded := pf.steps(k)
			ch := byKey[query.Key(folded)]
			if ch == nil {
				c.errorf("chains and replay", "%s: no chain holds the path %s", name, strings.Join(names, " -> "))
				continue
			}
			if !query.Reaches(ch.Path, names) {
				c.errorf("chains and replay", "%s: chain %s does not reach the path %s", name, query.Text(ch.Path, " -> "), strings.Join(names, " -> "))
			}
			reached[ch] += calls
		}
		if e.deep > 0 {
			continue // some calls' paths were not folded
		}
		for i := range chains {
			ch := &chains[i]
			if reached[ch] != ch.Calls {
				c.errorf("chains and replay", "%s: chain %s has %d calls, replay's paths folded into it %d", name, query.Text(ch.Path, " -> "), ch.Calls, reached[ch])
			}
		}
	}
}

// A pathFolder folds the events' paths as query.FoldPath does, each
// from its parent's folded chain: folding each path alone would take
// its depth per path.
type pathFolder struct {
	ev     *events
	fd     *query.Folder
	ids    map[string]uint32
	byID   []string
	folded map[int32]query.Folded
}

func newPathFolder(ev *events) *pathFolder {
	pf := &pathFolder{ev: ev, ids: map[string]uint32{}, folded: map[int32]query.Folded{}}
	pf.fd = query.NewFolder(func(id uint32) string { return pf.byID[id] })
	return pf
}

// fold returns path k folded.
func (pf *pathFolder) fold(k int32) query.Folded {
	if k == 0 {
		return pf.fd.Empty()
	}
	if s, ok := pf.folded[k]; ok {
		return s
	}
	name := pf.ev.name[k]
	id, ok := pf.ids[name]
	if !ok {
		id = uint32(len(pf.byID))
		pf.ids[name] = id
		pf.byID = append(pf.byID, name)
	}
	s := pf.fd.Push(pf.fold(pf.ev.parent[k]), id)
	pf.folded[k] = s
	return s
}

// steps returns path k folded, as FoldPath returns it.
func (pf *pathFolder) steps(k int32) []query.Step { return pf.fd.Steps(pf.fold(k), true) }

// maxPages bounds the function pages checked, the most called first:
// each walks the whole tree of chains.
const maxPages = 100

// functionPages: the function page's callers and callees are the
// events', and no callee takes longer than its caller.
func (c *checker) functionPages(t *query.Trace, ev *events) {
	names := make([]string, 0, len(ev.fns))
	for name := range ev.fns {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := cmp.Compare(ev.fns[b].calls, ev.fns[a].calls); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	for _, name := range names[:min(len(names), maxPages)] {
		e := ev.fns[name]
		id, err := t.Func(name)
		if err != nil {
			continue
		}
		v, ok := t.View(id, 0, nil)
		if !ok {
			c.errorf("function page and report", "%s: no function page", name)
			continue
		}
		for _, edge := range v.Callers {
			caller := edge.Name
			if caller == query.StartEdge {
				caller = ""
			}
			if edge.Calls != e.callers[caller] {
				c.errorf("function page and the events", "%s: %d calls from %s, the events %d", name, edge.Calls, edge.Name, e.callers[caller])
			}
		}
		for _, edge := range v.Callees {
			if edge.Calls != e.callees[edge.Name] {
				c.errorf("function page and the events", "%s: %d calls of %s, the events %d", name, edge.Calls, edge.Name, e.callees[edge.Name])
			}
			if edge.TotalNs > v.TotalNs {
				c.errorf("function page's callees and its total", "%s: callee %s takes %d, more than the function's %d", name, edge.Name, edge.TotalNs, v.TotalNs)
			}
		}
		if len(v.Callers) != len(e.callers) || len(v.Callees) != len(e.callees) {
			c.errorf("function page and the events", "%s: %d callers and %d callees, the events %d and %d", name, len(v.Callers), len(v.Callees), len(e.callers), len(e.callees))
		}
	}
}

// flame: the flame graph's width is the goroutines' outermost calls' time,
// which the folded and pprof exports' self times add up to.
func (c *checker) flame(p *analysis.Profile, ev *events) {
	p.Walk(func(n *analysis.Node) {
		if n.Self < 0 || n.Total < 0 {
			c.errorf("the call tree", "a chain of %s with total %d, self %d: no time is negative", p.Name(n.Func), n.Total, n.Self)
		}
	})
	fg := query.FlameGraph(p, false, query.Wall)
	if fg.Value[0] != ev.top {
		c.errorf("flame graph and the events", "the graph is %d wide, the goroutines' outermost calls take %d", fg.Value[0], ev.top)
	}
	// Each failed call is in one box of the graph by total, and at the
	// root of the inverted one when its function has self time.
	var failed, boxed uint64
	for _, f := range ev.fns {
		failed += f.errors
	}
	for _, n := range fg.Errors {
		boxed += n
	}
	if boxed != failed {
		c.errorf("flame graph's errors and the events", "the graph's boxes hold %d failed calls, the events %d", boxed, failed)
	}
	var folded bytes.Buffer
	if _, err := export.Folded(&folded, p); err != nil {
		c.errorf("folded export", "%v", err)
		return
	}
	var sum int64
	for _, line := range strings.Split(strings.TrimSpace(folded.String()), "\n") {
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil {
			c.errorf("folded export", "line %q", line)
			return
		}
		sum += v
	}
	if sum != fg.Value[0] {
		c.errorf("folded export and flame graph", "the folded export's times add up to %d, the graph is %d wide", sum, fg.Value[0])
	}
	prof, _ := export.Profile(p)
	var wall int64
	for _, s := range prof.Sample {
		wall += s.Value[1]
	}
	if wall != sum {
		c.errorf("pprof export and folded export", "pprof's wall samples add up to %d, the folded export's to %d", wall, sum)
	}
}

// goroutines: no goroutine lives less than nothing or longer than the
// trace.
func (c *checker) goroutines(t *query.Trace, ev *events) {
	g := t.Goroutines(10, 0)
	for _, s := range []analysis.Spread{g.Lifetime, g.Work} {
		if s.P50 < 0 || s.P50 > s.P90 || s.P90 > s.Max || int64(s.Max) > ev.duration {
			c.errorf("goroutines and the trace's length", "spread %+v in a trace of %d", s, ev.duration)
		}
	}
}

// lines is a writer that hands each line written to line, so that
// replay's output of a large trace is read as it is written.
type lines struct {
	part []byte
	line func(string)
}

func (l *lines) Write(p []byte) (int, error) {
	n := len(p)
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.part = append(l.part, p...)
			return n, nil
		}
		l.line(string(append(l.part, p[:i]...)))
		l.part, p = l.part[:0], p[i+1:]
	}
}
