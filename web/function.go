package web

import (
	"net/http"
	"sort"
	"strings"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/tracefile"
)

type edgeJSON struct {
	Name  string `json:"name"`
	Calls uint64 `json:"calls"`
	Total int64  `json:"total"`
}

type callJSON struct {
	G     uint64 `json:"g"`
	Start int64  `json:"start"`
	Dur   int64  `json:"dur"`
	Exit  string `json:"exit,omitempty"`
}

type chainJSON struct {
	Path        []string   `json:"path"`
	Calls       uint64     `json:"calls"`
	Total       int64      `json:"total"`
	Max         int64      `json:"max"`
	Panics      uint64     `json:"panics,omitempty"`
	SpawnedFrom [][]string `json:"spawnedFrom,omitempty"`
	Slowest     []callJSON `json:"slowest"`
}

type bucketJSON struct {
	Lo    int64      `json:"lo"`
	Hi    int64      `json:"hi"`
	Count int        `json:"count"`
	Calls []callJSON `json:"calls"` // the slowest of the bucket, at most bucketCalls
}

type functionJSON struct {
	funcRow
	Location string          `json:"location"`
	Mean     int64           `json:"mean"`
	Min      int64           `json:"min"`
	P50      int64           `json:"p50"`
	P99      int64           `json:"p99"`
	Panics   uint64          `json:"panics"`
	Waits    []analysis.Wait `json:"waits,omitempty"`
	Syscalls []analysis.Wait `json:"syscalls,omitempty"` // CPU in blocking system calls
	Callers  []edgeJSON      `json:"callers"`
	Callees  []edgeJSON      `json:"callees"`
	Chains   []chainJSON     `json:"chains"`
	Hist     []bucketJSON    `json:"hist"`
	More     int             `json:"moreChains,omitempty"`
}

const (
	maxChains   = 200 // chains listed; the rest are counted
	histBuckets = 24
	bucketCalls = 20
)

// function answers /api/func?name=NAME: the function view.
func (s *Server) function(_ http.ResponseWriter, _ *http.Request, p *params) (any, error) {
	name := p.q.Get("name")
	if name == "" {
		return nil, badRequest("parameter name: want a function name")
	}
	t := s.t
	f := t.Profile.Funcs[t.byName[name]] // id 0 has no figures
	if f == nil {
		msg := "no function " + name + " in the trace's calls"
		if near := t.similar(name, 3); len(near) > 0 {
			msg += "; did you mean " + strings.Join(near, ", ")
		}
		return nil, notFound(msg)
	}
	id := f.ID
	out := functionJSON{
		funcRow:  funcRow{f.Name, f.Calls, f.Total, f.Self, f.Max, f.CPU, f.Wait},
		Location: t.files[id],
		Mean:     int64(f.Mean()),
		Min:      f.Min,
		P50:      int64(f.Quantile(0.5)),
		P99:      int64(f.Quantile(0.99)),
		Panics:   f.Panics,
		Waits:    f.Waits,
		Syscalls: f.Syscalls,
	}
	nodes := t.Profile.Nodes(id)
	callers, callees := map[string]*edgeJSON{}, map[string]*edgeJSON{}
	add := func(m map[string]*edgeJSON, name string, calls uint64, total int64) {
		e := m[name]
		if e == nil {
			e = &edgeJSON{Name: name}
			m[name] = e
		}
		e.Calls += calls
		e.Total += total
	}
	for _, n := range nodes {
		caller := "(goroutine start)"
		if n.Parent != nil && n.Parent.Parent != nil {
			caller = t.name(n.Parent.Func)
		}
		add(callers, caller, n.Calls, n.Total)
		for _, c := range n.Children {
			if c.Calls > 0 {
				add(callees, t.name(c.Func), c.Calls, c.Total)
			}
		}
	}
	out.Callers, out.Callees = edges(callers), edges(callees)
	out.Chains = []chainJSON{}
	for i, n := range nodes {
		if i == maxChains {
			out.More = len(nodes) - i
			break
		}
		out.Chains = append(out.Chains, s.chain(n))
	}
	out.Hist = t.histogram(id, f.Min, f.Max)
	return out, nil
}

// similar returns up to n names of called functions that contain query,
// or the last dot-separated part of it, ignoring case.
func (t *Trace) similar(query string, n int) []string {
	q := strings.ToLower(query)
	if i := strings.LastIndexByte(q, '.'); i >= 0 && i+1 < len(q) {
		q = q[i+1:]
	}
	var out []string
	for id, name := range t.names {
		if len(out) < n && t.Profile.Funcs[uint32(id)] != nil && strings.Contains(strings.ToLower(name), q) {
			out = append(out, name)
		}
	}
	return out
}

func edges(m map[string]*edgeJSON) []edgeJSON {
	out := make([]edgeJSON, 0, len(m))
	for _, e := range m {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Total != out[j].Total {
			return out[i].Total > out[j].Total
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func (s *Server) chain(n *analysis.Node) chainJSON {
	t := s.t
	c := chainJSON{Path: t.path(n), Calls: n.Calls, Total: n.Total, Max: n.Max, Panics: n.Panics, Slowest: []callJSON{}}
	// The chains of parent goroutines that started this one, most often first.
	type from struct {
		n     *analysis.Node
		count uint64
	}
	var fs []from
	for f, k := range n.Root().SpawnedFrom {
		fs = append(fs, from{f, k})
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].count != fs[j].count {
			return fs[i].count > fs[j].count
		}
		return len(fs[i].n.Path()) < len(fs[j].n.Path())
	})
	for _, f := range fs[:min(len(fs), 5)] {
		c.SpawnedFrom = append(c.SpawnedFrom, t.path(f.n))
	}
	for _, in := range n.Slowest {
		c.Slowest = append(c.Slowest, callJSON{in.G, in.Start, in.Dur, exitName(in.Exit)})
	}
	return c
}

func (t *Trace) path(n *analysis.Node) []string {
	var names []string
	for _, id := range n.Path() {
		names = append(names, t.name(id))
	}
	return names
}

// exitName says how a call ended, "" for a return.
func exitName(k tracefile.ExitKind) string {
	if k == tracefile.Return {
		return ""
	}
	return k.String()
}
