package web

import (
	"net/url"
	"reflect"
	"testing"
)

func TestFunction(t *testing.T) {
	s := New(loadTrace(t, 100), nil, nil)
	for _, tc := range []struct {
		name             string
		callers, callees []edgeJSON
		chains           [][]string
		spawned          [][]string
		histCalls        int
	}{
		{"main.work", []edgeJSON{{"main.main", 100, 90000}}, []edgeJSON{{"main.leaf", 100, 40000}},
			[][]string{{"main.main", "main.work"}}, nil, 100},
		{"main.D", []edgeJSON{{"main.worker", 1, 4980}}, []edgeJSON{},
			[][]string{{"main.worker", "main.D"}}, [][]string{{"main.main"}}, 1},
		{"main.main", []edgeJSON{{"(goroutine start)", 1, 110000}}, []edgeJSON{{"main.work", 100, 90000}},
			[][]string{{"main.main"}}, nil, 1},
	} {
		v, err := s.function(nil, nil, &params{q: url.Values{"name": {tc.name}}})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		f := v.(functionJSON)
		if !reflect.DeepEqual(f.Callers, tc.callers) || !reflect.DeepEqual(f.Callees, tc.callees) {
			t.Errorf("%s: callers %v, callees %v; want %v, %v", tc.name, f.Callers, f.Callees, tc.callers, tc.callees)
		}
		var chains [][]string
		for _, c := range f.Chains {
			chains = append(chains, c.Path)
			if !reflect.DeepEqual(c.SpawnedFrom, tc.spawned) {
				t.Errorf("%s: chain %v started from %v, want %v", tc.name, c.Path, c.SpawnedFrom, tc.spawned)
			}
		}
		if !reflect.DeepEqual(chains, tc.chains) {
			t.Errorf("%s: chains %v, want %v", tc.name, chains, tc.chains)
		}
		n := 0
		for _, b := range f.Hist {
			n += b.Count
			if len(b.Calls) > bucketCalls || len(b.Calls) > b.Count {
				t.Errorf("%s: bucket of %d calls lists %d", tc.name, b.Count, len(b.Calls))
			}
			for i, c := range b.Calls {
				if c.Dur < b.Lo && b.Lo > 1 || i > 0 && c.Dur > b.Calls[i-1].Dur {
					t.Errorf("%s: bucket %d-%d lists %+v", tc.name, b.Lo, b.Hi, b.Calls)
					break
				}
			}
		}
		if n != tc.histCalls {
			t.Errorf("%s: histogram counts %d calls, want %d", tc.name, n, tc.histCalls)
		}
	}
}

// TestHistogramKeepsSlowest spreads calls over buckets and checks that
// each bucket lists its slowest calls.
func TestHistogramKeepsSlowest(t *testing.T) {
	tr := loadTrace(t, 10)
	l := tr.ix.lanes[tr.ix.byG[1]]
	for i := range l.dur {
		if l.fn[i] == fnWork {
			l.dur[i] = int64(1000 + i) // durations rise with the index
		}
	}
	for i := 0; i < 3*bucketCalls; i++ { // one bucket's worth of more calls
		l.fn = append(l.fn, fnWork)
		l.dur = append(l.dur, 1000)
		l.start = append(l.start, 0)
		l.exit = append(l.exit, 0)
	}
	bs := tr.histogram(fnWork, 1000, 1000+int64(len(l.fn)))
	if bs[0].Count < 3*bucketCalls || len(bs[0].Calls) != bucketCalls {
		t.Fatalf("first bucket: %d calls, %d listed", bs[0].Count, len(bs[0].Calls))
	}
	if bs[0].Calls[0].Dur < bs[0].Calls[len(bs[0].Calls)-1].Dur || bs[0].Calls[0].Dur == 1000 {
		t.Errorf("first bucket lists %+v, not its slowest first", bs[0].Calls)
	}
}
