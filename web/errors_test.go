package web

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/tracefile"
)

// errorsScript is a trace where main.D fails once of one call through
// main.main -> main.load, never through main.main, and twice of three
// calls in goroutine 2, under main.worker. main.load's own return is
// clean: an error is the call's that returned it, not its callers'.
const errorsScript = `
1 +main.main 0
1 +main.load 10
1 +main.D 20
1 -missing 30
1 - 40
1 +main.D 50
1 - 60
2 go 1 main.main 70
2 +main.worker 80
2 +main.D 90
2 -bad 100
2 +main.D 110
2 -bad 120
2 +main.D 130
2 - 140
2 - 150
1 - 200
`

// errorsTrace writes the trace of errorsScript, and returns its path.
func errorsTrace(t *testing.T) string {
	t.Helper()
	return scriptTrace(t, errorsScript)
}

func errorsServer(t *testing.T) *httptest.Server {
	t.Helper()
	return scriptServer(t, errorsScript)
}

// getJSON decodes the answer to path into v.
func getJSON(t *testing.T, srv *httptest.Server, path string, v any) {
	t.Helper()
	res, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("%s: %d %s", path, res.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func errCount(msg string, n uint64) query.ErrorCount {
	return query.ErrorCount{Error: tracefile.Error{Type: "*errors.errorString", Message: msg}, Calls: n}
}

// TestFunctionErrors checks that the function view carries each error
// with its count, and each chain's failures with their messages.
func TestFunctionErrors(t *testing.T) {
	srv := errorsServer(t)
	type chain struct {
		path     string
		calls    uint64
		errors   uint64
		messages []query.ErrorCount
	}
	for _, tc := range []struct {
		name     string
		errors   uint64
		messages []query.ErrorCount
		chains   []chain
		failed   int // histogram calls listed with their error
	}{
		{"main.D", 3, []query.ErrorCount{errCount("bad", 2), errCount("missing", 1)}, []chain{
			{"main.worker main.D", 3, 2, []query.ErrorCount{errCount("bad", 2)}},
			{"main.main main.D", 1, 0, nil},
			{"main.main main.load main.D", 1, 1, []query.ErrorCount{errCount("missing", 1)}},
		}, 3},
		{"main.load", 0, []query.ErrorCount{}, []chain{{"main.main main.load", 1, 0, nil}}, 0},
	} {
		var v query.FunctionView
		getJSON(t, srv, "/api/func?name="+tc.name, &v)
		if v.Errors != tc.errors || !reflect.DeepEqual(v.ErrorMessages, tc.messages) {
			t.Errorf("%s: %d errors %v, want %d %v", tc.name, v.Errors, v.ErrorMessages, tc.errors, tc.messages)
		}
		var chains []chain
		for _, c := range v.Chains {
			var names []string
			for _, s := range c.Path {
				names = append(names, s.Name)
			}
			chains = append(chains, chain{strings.Join(names, " "), c.Calls, c.Errors, c.Messages})
		}
		if !reflect.DeepEqual(chains, tc.chains) {
			t.Errorf("%s: chains %+v, want %+v", tc.name, chains, tc.chains)
		}
		failed := 0
		for _, b := range v.Histogram {
			for _, c := range b.Slowest {
				if c.Error != nil {
					failed++
					if c.Error.Type != "*errors.errorString" || c.Error.Message != "bad" && c.Error.Message != "missing" {
						t.Errorf("%s: call %+v returned %+v", tc.name, c, *c.Error)
					}
				}
			}
		}
		if failed != tc.failed {
			t.Errorf("%s: the histogram lists %d calls with errors, want %d", tc.name, failed, tc.failed)
		}
	}
}

// TestTimelineErrors checks the error the timeline's bars carry: a call's
// error, named in the response, or how many of a block's calls failed.
func TestTimelineErrors(t *testing.T) {
	srv := errorsServer(t)
	var names []string
	getJSON(t, srv, "/api/names", &names)
	type bar struct {
		fn, err string // for a call: its function and error message
		failed  int64  // for a block: calls that failed
	}
	for _, tc := range []struct {
		name  string
		query string
		want  [][]bar // by lane
	}{
		// Every call wide enough for a bar of its own.
		{"calls", "from=0&to=201&px=1000", [][]bar{
			{{"main.main", "", 0}, {"main.load", "", 0}, {"main.D", "missing", 0}, {"main.D", "", 0}},
			{{"main.worker", "", 0}, {"main.D", "bad", 0}, {"main.D", "bad", 0}, {"main.D", "", 0}},
		}},
		// On one pixel, one block a lane.
		{"blocks", "from=0&to=201&px=1", [][]bar{{{"", "", 1}}, {{"", "", 2}}}},
		// The window ends before the failures of goroutine 2.
		{"window", "from=0&to=95&px=1000", [][]bar{
			{{"main.main", "", 0}, {"main.load", "", 0}, {"main.D", "missing", 0}, {"main.D", "", 0}},
			{{"main.worker", "", 0}, {"main.D", "bad", 0}},
		}},
	} {
		var r struct {
			Lanes []struct {
				Items []int64 `json:"items"`
			} `json:"lanes"`
			Errors map[uint32]tracefile.Error `json:"errors"`
		}
		getJSON(t, srv, "/api/timeline?l0=0&l1=2&"+tc.query, &r)
		var got [][]bar
		for _, l := range r.Lanes {
			if len(l.Items)%itemLen != 0 {
				t.Fatalf("%s: %d numbers for bars of %d", tc.name, len(l.Items), itemLen)
			}
			var bars []bar
			for j := 0; j < len(l.Items); j += itemLen {
				it := l.Items[j : j+itemLen]
				if it[4] > 1 {
					bars = append(bars, bar{failed: it[7]})
					continue
				}
				b := bar{fn: names[it[2]]}
				if it[7] != 0 {
					e, ok := r.Errors[uint32(it[7])]
					if !ok || e.Type != "*errors.errorString" {
						t.Errorf("%s: error %d of a bar is %+v in %v", tc.name, it[7], e, r.Errors)
					}
					b.err = e.Message
				}
				bars = append(bars, b)
			}
			got = append(got, bars)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: bars %v, want %v", tc.name, got, tc.want)
		}
		if tc.name == "blocks" && r.Errors != nil {
			t.Errorf("%s: errors %v named, with no call's bar to name them", tc.name, r.Errors)
		}
	}
}

// TestErrorsElsewhere checks the errors in the other answers: the
// overview's count and functions, the call tree's rows, and the flame
// graphs' boxes, by total time and inverted.
func TestErrorsElsewhere(t *testing.T) {
	srv := errorsServer(t)
	var ov overviewJSON
	getJSON(t, srv, "/api/overview", &ov)
	if ov.Errors != 3 || len(ov.TopErrors) != 1 || ov.TopErrors[0].Name != "main.D" || ov.TopErrors[0].Errors != 3 {
		t.Errorf("overview: %d errors, functions %+v; want 3, main.D alone with 3", ov.Errors, ov.TopErrors)
	}

	var tree treeJSON
	getJSON(t, srv, "/api/tree?in=2&call=0", &tree)
	var errs []string
	for _, r := range tree.Rows {
		if r.Error != nil {
			errs = append(errs, r.Error.Message)
		} else {
			errs = append(errs, "")
		}
	}
	if !reflect.DeepEqual(errs, []string{"bad", "bad", ""}) {
		t.Errorf("call tree under main.worker: errors %q, want bad, bad and none", errs)
	}

	type box struct{ failed, of uint64 }
	for _, tc := range []struct {
		mode string
		want map[string]box // by path of names
	}{
		{"total", map[string]box{
			"main.main":                  {0, 1},
			"main.main main.load":        {0, 1},
			"main.main main.load main.D": {1, 1},
			"main.main main.D":           {0, 1},
			"main.worker":                {0, 1},
			"main.worker main.D":         {2, 3},
		}},
		// Above the root, a box stands for the calls of the function
		// at the root through its callers.
		{"self", map[string]box{
			"main.D":                     {3, 5},
			"main.D main.worker":         {2, 3},
			"main.D main.main":           {0, 1},
			"main.D main.load":           {1, 1},
			"main.D main.load main.main": {1, 1},
			"main.main":                  {0, 1},
			"main.load":                  {0, 1},
			"main.load main.main":        {0, 1},
			"main.worker":                {0, 1},
		}},
	} {
		var g query.Tree
		getJSON(t, srv, "/api/flame?mode="+tc.mode, &g)
		if len(g.Errors) != g.Len() || tc.mode == "self" && len(g.ErrorCalls) != g.Len() {
			t.Fatalf("%s: errors of %d boxes and calls of %d, for %d boxes", tc.mode, len(g.Errors), len(g.ErrorCalls), g.Len())
		}
		got := map[string]box{}
		for i := int32(1); int(i) < g.Len(); i++ {
			of := g.Calls[i]
			if g.ErrorCalls != nil {
				of = g.ErrorCalls[i]
			}
			got[strings.Join(g.Path(i), " ")] = box{g.Errors[i], of}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: boxes %v, want %v", tc.mode, got, tc.want)
		}
	}
}

// TestNoErrors checks that a trace without errors costs the answers
// nothing: no errors in the flame graph, none in the overview.
func TestNoErrors(t *testing.T) {
	srv := httptest.NewServer(New(loadTrace(t, 10), nil, nil).Handler())
	defer srv.Close()
	for _, tc := range []struct {
		path   string
		want   string
		absent []string
	}{
		{"/api/flame", `"value_ns":[`, []string{`"errors"`, `"error_calls"`}},
		{"/api/flame?mode=self", `"value_ns":[`, []string{`"errors"`, `"error_calls"`}},
		{"/api/overview", `"errors":0`, []string{`"top_errors"`}},
		{"/api/timeline?from=0&to=2000000&px=100&l0=0&l1=2", `"items":[`, []string{`"errors"`}},
		{"/api/tree?in=1", `"rows":[`, []string{`"error"`}},
	} {
		holds(t, srv.URL+tc.path, tc.want, tc.absent)
	}
}

// TestFlamePageErrors checks that the page calltrail flame writes holds
// the boxes' errors, and offers to colour by them.
func TestFlamePageErrors(t *testing.T) {
	path := errorsTrace(t)
	tr, err := LoadBase(path)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := WriteFlamePage(&page, tr.Trace, nil, FlamePage{Title: "errors"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"errors":[0,0,0,0,1,0,2]`, `"error_calls":[`, `"errors":3`} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the flame page lacks %s", want)
		}
	}
}

// holds checks that the answer at url holds want and none of absent.
func holds(t *testing.T, url, want string, absent []string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), want) {
		t.Errorf("%s: %.200s lacks %s", url, body, want)
	}
	for _, a := range absent {
		if strings.Contains(string(body), a) {
			t.Errorf("%s: %.200s holds %s", url, body, a)
		}
	}
}
