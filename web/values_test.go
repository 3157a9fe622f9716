package web

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

// longArg is a string argument longer than a trace keeps.
var longArg = strings.Repeat("/tmp/failing", 4)

// valuesTrace writes a trace with values, as --args records them, and
// returns its path. Goroutine 1: main.main calls main.handle(7, *os.File)
// = nil, which calls main.D("abc", 3) = 64, then main.D(longArg, len=7)
// = 0 and an error; main.handle's result comes after main.D's values.
// Goroutine 2: main.worker calls main.D(i) = 2i a hundred times, 2ns
// each. Goroutine 3: main.worker, without values.
func valuesTrace(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	e, err := tracewrite.NewEncoder(&buf, map[string]string{"program": "values"})
	if err != nil {
		t.Fatal(err)
	}
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{
		{Name: "main.main", File: "main.go", Line: 10},
		{Name: "main.handle", File: "main.go", Line: 20},
		{Name: "main.D", File: "main.go", Line: 30},
		{Name: "main.worker", File: "main.go", Line: 40},
	})
	e.Errors(1, []tracefile.Error{{Type: "*fs.PathError", Message: "missing"}, {Type: "*os.File"}})
	const main, handle, d, worker = 1, 2, 3, 4
	var b tracewrite.Batch
	b.Enter(1, main, 1000)
	b.Enter(1, handle, 1100)
	b.Value(1, tracefile.IntValue, false, 7, "")
	b.Value(1, tracefile.TypeValue, false, 2, "")
	b.Enter(1, d, 1200)
	b.Value(1, tracefile.StringValue, false, 3, "abc")
	b.Value(1, tracefile.IntValue, false, 3, "")
	b.Value(1, tracefile.IntValue, true, 64, "")
	b.Exit(1, tracefile.Return, 1500)
	b.Value(1, tracefile.NilValue, true, 0, "")
	b.Exit(1, tracefile.Return, 1800)
	b.Enter(1, d, 2000)
	b.Value(1, tracefile.StringValue, false, uint64(len(longArg)), longArg)
	b.Value(1, tracefile.LenValue, false, 7, "")
	b.Value(1, tracefile.IntValue, true, 0, "")
	b.Error(1, 1, 2400)
	b.Exit(1, tracefile.Return, 2400)
	b.Exit(1, tracefile.Return, 3000)
	b.Goroutine(tracefile.Goroutine{ID: 2, Parent: 1, CreatorFunc: main, StartFunc: worker}, 3050)
	b.Enter(2, worker, 3100)
	for i := range int64(100) {
		b.Enter(2, d, 3200+5*i)
		b.Value(2, tracefile.IntValue, false, uint64(i), "")
		b.Value(2, tracefile.IntValue, true, uint64(2*i), "")
		b.Exit(2, tracefile.Return, 3202+5*i)
	}
	b.Exit(2, tracefile.Return, 3800)
	b.Goroutine(tracefile.Goroutine{ID: 3, Parent: 1, CreatorFunc: main, StartFunc: worker}, 3850)
	b.Enter(3, worker, 3900)
	b.Exit(3, tracefile.Return, 4000)
	e.Events(&b)
	e.Clock(4000, 4000)
	e.End("main returned", time.Unix(0, 0))
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "values.out")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func valuesServer(t *testing.T) (*Trace, *httptest.Server) {
	t.Helper()
	tr, err := Load(valuesTrace(t))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Warning != "" {
		t.Fatalf("the trace of values loads with warning %q", tr.Warning)
	}
	srv := httptest.NewServer(New(tr, nil, nil).Handler())
	t.Cleanup(srv.Close)
	return tr, srv
}

// The values of goroutine 1's calls, by index in its lane.
var (
	handleValues = valuesJSON{Args: []string{"7", "*os.File"}, Results: []string{"nil"}}
	dValues      = valuesJSON{Args: []string{`"abc"`, "3"}, Results: []string{"64"}}
	longValues   = valuesJSON{Args: []string{strconv.Quote(longArg[:tracefile.MaxValueString]) + "…", "len=7"}, Results: []string{"0"}}
)

// TestTimelineValues checks that the timeline's answer carries the values
// of the calls it draws apart, and only theirs: not of the calls in a
// block, nor of calls outside the window.
func TestTimelineValues(t *testing.T) {
	_, srv := valuesServer(t)
	workerValues := map[int]valuesJSON{}
	for i := range 100 {
		workerValues[i+1] = valuesJSON{Args: []string{strconv.Itoa(i)}, Results: []string{strconv.Itoa(2 * i)}}
	}
	for _, tc := range []struct {
		name  string
		query string
		want  []map[int]valuesJSON // by lane
	}{
		// 1ns a pixel: every call is a bar of its own.
		{"calls", "from=0&to=4001&px=4001", []map[int]valuesJSON{{1: handleValues, 2: dValues, 3: longValues}, workerValues, nil}},
		// 40ns a pixel: goroutine 2's calls of main.D are blocks.
		{"blocks", "from=0&to=4001&px=100", []map[int]valuesJSON{{1: handleValues, 2: dValues, 3: longValues}, nil, nil}},
		// One pixel: every lane is a block.
		{"one pixel", "from=0&to=4001&px=1", []map[int]valuesJSON{nil, nil, nil}},
		// After main.handle: main.main, which has no values, and the
		// second call of main.D.
		{"window", "from=1900&to=2500&px=600", []map[int]valuesJSON{{3: longValues}, nil, nil}},
		// Within goroutine 2's calls of main.D, a few of them.
		{"inside", "from=3290&to=3310&px=1000", []map[int]valuesJSON{nil, {19: workerValues[19], 20: workerValues[20], 21: workerValues[21], 22: workerValues[22]}, nil}},
	} {
		var r timelineJSON
		getJSON(t, srv, "/api/timeline?l0=0&l1=3&"+tc.query, &r)
		if len(r.Lanes) != 3 {
			t.Fatalf("%s: %d lanes", tc.name, len(r.Lanes))
		}
		var got []map[int]valuesJSON
		for _, l := range r.Lanes {
			got = append(got, l.Values)
			bars := map[int]bool{} // calls drawn apart
			for j := 0; j+itemLen <= len(l.Items); j += itemLen {
				if l.Items[j+4] == 1 {
					bars[int(l.Items[j+5])] = true
				}
			}
			for c := range l.Values {
				if !bars[c] {
					t.Errorf("%s: lane %d: values of call %d, which has no bar of its own", tc.name, l.Lane, c)
				}
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: values %v\nwant %v", tc.name, got, tc.want)
		}
	}
}

// TestTreeValues checks that the call tree's rows carry their calls'
// values, and that a row of a call without them has none.
func TestTreeValues(t *testing.T) {
	_, srv := valuesServer(t)
	for _, tc := range []struct {
		query string
		want  []valuesJSON
	}{
		{"in=1", []valuesJSON{{}}},
		{"in=1&call=0", []valuesJSON{handleValues, longValues}},
		{"in=1&call=1", []valuesJSON{dValues}},
		{"in=1&F=main%5C.D%24", []valuesJSON{dValues, longValues}},
		{"in=3", []valuesJSON{{}}},
	} {
		var tree treeJSON
		getJSON(t, srv, "/api/tree?"+tc.query, &tree)
		var got []valuesJSON
		for _, r := range tree.Rows {
			got = append(got, r.valuesJSON)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: values %+v\nwant %+v", tc.query, got, tc.want)
		}
	}
}

// TestValuesIndex checks that the index keeps values only for the lanes
// and calls that have them, each call's in order, arguments first.
func TestValuesIndex(t *testing.T) {
	tr, _ := valuesServer(t)
	for g, want := range map[uint64]int{1: 9, 2: 200, 3: 0} {
		l := tr.ix.lanes[tr.ix.byG[g]]
		if len(l.vals) != want || want == 0 && l.vals != nil {
			t.Errorf("g%d: %d values kept, want %d", g, len(l.vals), want)
		}
		for c := range l.len() {
			if l.valuesOf(c) == nil && c > 0 && g != 3 {
				t.Errorf("g%d: call %d has no values", g, c)
			}
		}
	}
	l := tr.ix.lanes[tr.ix.byG[1]]
	if vs := l.valuesOf(0); vs != nil {
		t.Errorf("main.main has values %+v", vs)
	}
	if got := formatValues(l.valuesOf(1)); !reflect.DeepEqual(got, handleValues) {
		t.Errorf("main.handle's values: %+v", got)
	}
	// A trace without values keeps none.
	for _, l := range loadTrace(t, 10).ix.lanes {
		if l.vals != nil {
			t.Errorf("g%d of a trace without values keeps %d", l.g, len(l.vals))
		}
	}
}

// TestNoValues checks that a trace without values adds nothing to the
// answers.
func TestNoValues(t *testing.T) {
	srv := httptest.NewServer(New(loadTrace(t, 10), nil, nil).Handler())
	defer srv.Close()
	for _, tc := range []struct{ path, want string }{
		{"/api/timeline?from=0&to=2100000&px=20000&l0=0&l1=2", `"items":[`},
		{"/api/tree?in=1&call=0", `"rows":[`},
		{"/api/tree?in=2&call=0", `"rows":[`},
	} {
		holds(t, srv.URL+tc.path, tc.want, []string{`"values"`, `"args"`, `"results"`})
	}
}
