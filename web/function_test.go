package web

import (
	"net/url"
	"reflect"
	"testing"

	"github.com/calltrail/calltrail/query"
)

func steps(names ...string) []query.Step {
	var out []query.Step
	for _, n := range names {
		out = append(out, query.Step{Name: n})
	}
	return out
}

func TestFunction(t *testing.T) {
	s := New(loadTrace(t, 100), nil, nil)
	for _, tc := range []struct {
		name             string
		callers, callees []query.Edge
		chains           [][]query.Step
		spawned          [][]query.Step
		histCalls        uint64
	}{
		{"main.work", []query.Edge{{Name: "main.main", Calls: 100, TotalNs: 90000}}, []query.Edge{{Name: "main.leaf", Calls: 100, TotalNs: 40000}},
			[][]query.Step{steps("main.main", "main.work")}, [][]query.Step{}, 100},
		{"main.D", []query.Edge{{Name: "main.worker", Calls: 1, TotalNs: 4980}}, []query.Edge{},
			[][]query.Step{steps("main.worker", "main.D")}, [][]query.Step{steps("main.main")}, 1},
		{"main.main", []query.Edge{{Name: query.StartEdge, Calls: 1, TotalNs: 110000}}, []query.Edge{{Name: "main.work", Calls: 100, TotalNs: 90000}},
			[][]query.Step{steps("main.main")}, [][]query.Step{}, 1},
	} {
		v, err := s.function(nil, nil, &params{q: url.Values{"name": {tc.name}}})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		f := v.(query.FunctionView)
		if !reflect.DeepEqual(f.Callers, tc.callers) || !reflect.DeepEqual(f.Callees, tc.callees) {
			t.Errorf("%s: callers %v, callees %v; want %v, %v", tc.name, f.Callers, f.Callees, tc.callers, tc.callees)
		}
		var chains [][]query.Step
		for _, c := range f.Chains {
			chains = append(chains, c.Path)
			if !reflect.DeepEqual(c.SpawnedFrom, tc.spawned) {
				t.Errorf("%s: chain %v started from %v, want %v", tc.name, c.Path, c.SpawnedFrom, tc.spawned)
			}
		}
		if !reflect.DeepEqual(chains, tc.chains) {
			t.Errorf("%s: chains %v, want %v", tc.name, chains, tc.chains)
		}
		var n uint64
		for k, b := range f.Histogram {
			n += b.Count
			if uint64(len(b.Slowest)) > b.Count {
				t.Errorf("%s: bar of %d calls lists %d", tc.name, b.Count, len(b.Slowest))
			}
			for i, c := range b.Slowest {
				if c.DurationNs < b.LoNs || c.DurationNs >= b.HiNs && k < len(f.Histogram)-1 || i > 0 && c.DurationNs > b.Slowest[i-1].DurationNs {
					t.Errorf("%s: bar %d-%d lists %+v", tc.name, b.LoNs, b.HiNs, b.Slowest)
					break
				}
			}
		}
		if n != tc.histCalls {
			t.Errorf("%s: histogram counts %d calls, want %d", tc.name, n, tc.histCalls)
		}
	}
}
