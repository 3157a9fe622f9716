package web

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/replay"
	"github.com/calltrail/calltrail/spans"
	"github.com/calltrail/calltrail/tracefile"
)

// requestsScript is a service's trace: goroutine 1 serves request 1
// (span 1, a GET, with span 2, db.query, under it, where main.query
// fails) and then request 3, and starts goroutine 2 in request 1's
// main.handle; goroutine 2 runs once the request is over, still for it.
// main.main and main.serve run for no request, nor does goroutine 3.
const requestsScript = `
1 +main.main 0
1 +main.serve 10
1 span 1 0 GET 20
1 +main.handle 30
1 span 2 1 db.query 35
1 +main.query 40
1 -timeout 50
1 end 2 52
2 go 1 main.handle 55
1 - 60
1 end 1 70
1 span 3 0 GET 80
1 +main.handle 90
1 +main.query 92
1 - 95
1 - 100
1 end 3 110
1 - 120
2 +main.price 130
2 +main.sum 140
2 - 150
2 - 160
3 go 1 main.main 165
3 +main.other 170
3 - 180
1 - 200
`

// requestList is /api/requests's answer, decoded.
type requestList struct {
	Total int `json:"total"`
	Spans []struct {
		ID         string `json:"span_id"`
		Trace      string `json:"trace_id"`
		Parent     string `json:"parent_span_id"`
		Name       string `json:"name"`
		Kind       int    `json:"kind"`
		DurationNs int64  `json:"duration_ns"`
		Calls      uint64 `json:"calls"`
		Errors     uint64 `json:"errors"`
		Goroutines int    `json:"goroutines"`
		Nested     bool   `json:"nested"`
		Funcs      []struct {
			Name string `json:"name"`
		} `json:"functions"`
	} `json:"spans"`
}

// traceHex is the trace id of script span n's request.
func traceHex(n uint64) string { return fmt.Sprintf("%032x", n) }

// TestRequests checks /api/requests against calltrail spans --json's
// figures, and that the views given a request's trace id show its calls
// alone, in every goroutine it used, the one it started too.
func TestRequests(t *testing.T) {
	srv := scriptServer(t, requestsScript)

	var list requestList
	getJSON(t, srv, "/api/requests", &list)
	type row struct {
		span, name          string
		dur                 int64
		calls, errors       uint64
		goroutines          int
		nested              bool
		firstFunc, traceHex string
	}
	var got []row
	for _, s := range list.Spans {
		first := ""
		if len(s.Funcs) > 0 {
			first = s.Funcs[0].Name
		}
		got = append(got, row{s.ID, s.Name, s.DurationNs, s.Calls, s.Errors, s.Goroutines, s.Nested, first, s.Trace})
	}
	want := []row{
		{tracetest.SpanID(1).String(), "GET", 50, 4, 1, 2, false, "main.handle", traceHex(1)},
		{tracetest.SpanID(3).String(), "GET", 30, 2, 0, 1, false, "main.handle", traceHex(3)},
		{tracetest.SpanID(2).String(), "db.query", 17, 1, 1, 1, true, "main.query", traceHex(1)},
	}
	if list.Total != 3 || !reflect.DeepEqual(got, want) {
		t.Errorf("requests: %d\n%+v\nwant 3\n%+v", list.Total, got, want)
	}
	getJSON(t, srv, "/api/requests?top=1&funcs=0&span=^db", &list)
	if list.Total != 1 || len(list.Spans) != 1 || list.Spans[0].Name != "db.query" || len(list.Spans[0].Funcs) != 0 {
		t.Errorf("requests of span ^db, no functions: %+v", list)
	}

	req1 := "trace-id=" + traceHex(1)
	// The tree: goroutines 1 and 2, each with the request's calls, depths
	// counting them alone, as calltrail replay --trace-id prints them.
	var tree treeJSON
	getJSON(t, srv, "/api/tree?"+req1, &tree)
	if want := []goroutineRowJSON{{1, 0, 2}, {2, 1, 2}}; !reflect.DeepEqual(tree.Goroutines, want) {
		t.Errorf("tree of request 1: goroutines %+v, want %+v", tree.Goroutines, want)
	}
	rows := func(q string) string {
		t.Helper()
		var tr treeJSON
		getJSON(t, srv, "/api/tree?"+q, &tr)
		var out []string
		for _, r := range tr.Rows {
			s := fmt.Sprintf("%d:%s", r.Call, []string{"", "main.main", "main.serve", "main.handle", "main.query", "main.price", "main.sum", "main.other"}[r.Func])
			if r.Error != nil {
				s += " " + r.Error.Message
			}
			out = append(out, s)
		}
		return strings.Join(out, ", ")
	}
	for _, tc := range []struct{ q, want string }{
		{req1 + "&in=1", "0:main.handle"},
		{req1 + "&in=1&call=0", "1:main.query timeout"},
		{req1 + "&in=2", "0:main.price"},
		{req1 + "&in=2&call=0", "1:main.sum"},
		{req1 + "&in=1&D=1&call=0", ""},
		{"trace-id=" + traceHex(3) + "&in=1", "0:main.handle"},
		{"trace-id=" + traceHex(3) + "&in=1&call=0", "1:main.query"},
		// db.query alone: main.query, outermost.
		{req1 + "&span=db%5C.query&in=1", "0:main.query timeout"},
		{"span=.&in=1", "0:main.handle, 2:main.handle"},
	} {
		if got := rows(tc.q); got != tc.want {
			t.Errorf("tree %s: %s, want %s", tc.q, got, tc.want)
		}
	}

	// The timeline: the same goroutines, their calls' bars, the request's
	// time.
	var lanes lanesJSON
	getJSON(t, srv, "/api/lanes?"+req1, &lanes)
	if !reflect.DeepEqual(lanes.G, []uint64{1, 2}) || !reflect.DeepEqual(lanes.Calls, []int{2, 2}) || !reflect.DeepEqual(lanes.Depth, []int{2, 2}) ||
		lanes.First != 30 || lanes.Last != 160 || lanes.End != 200 {
		t.Errorf("lanes of request 1: %+v", lanes)
	}
	var tl timelineJSON
	getJSON(t, srv, "/api/timeline?px=20000&"+req1, &tl)
	var bars []string
	for _, l := range tl.Lanes {
		for j := 0; j < len(l.Items); j += tl.Stride {
			it := l.Items[j : j+tl.Stride]
			bars = append(bars, fmt.Sprintf("g%d %d@%d depth %d err %d", lanes.G[l.Lane], it[2], it[0], it[3], it[7]))
		}
	}
	if got, want := strings.Join(bars, ", "), "g1 3@30 depth 1 err 0, g1 4@40 depth 2 err 1, g2 5@130 depth 1 err 0, g2 6@140 depth 2 err 0"; got != want {
		t.Errorf("timeline of request 1: %s, want %s", got, want)
	}
	var info laneJSON
	getJSON(t, srv, "/api/lane?g=2&"+req1, &info)
	if info.Calls != 2 || info.Parent != 1 || len(info.StartedIn) != 1 || info.StartedIn[0].Name != "main.handle" {
		t.Errorf("lane 2 of request 1: %+v", info)
	}

	// Its failed calls, and the analysis of its calls alone.
	var failed failedJSON
	getJSON(t, srv, "/api/failed?"+req1, &failed)
	if failed.Total != 1 || len(failed.Calls) != 1 || failed.Calls[0].G != 1 || failed.Calls[0].Call != 1 || failed.Calls[0].Error.Message != "timeout" {
		t.Errorf("failed calls of request 1: %+v", failed)
	}
	getJSON(t, srv, "/api/failed?trace-id="+traceHex(3), &failed)
	if failed.Total != 0 || len(failed.Calls) != 0 {
		t.Errorf("failed calls of request 3: %+v", failed)
	}
	var ov overviewJSON
	getJSON(t, srv, "/api/overview?"+req1, &ov)
	if ov.Calls != 4 || ov.Goroutines != 2 || ov.Errors != 1 || ov.Requests != 0 {
		t.Errorf("overview of request 1: %d calls, %d goroutines, %d errors, %d requests", ov.Calls, ov.Goroutines, ov.Errors, ov.Requests)
	}
	getJSON(t, srv, "/api/overview", &ov)
	if ov.Calls != 9 || ov.Requests != 3 {
		t.Errorf("overview: %d calls, %d requests", ov.Calls, ov.Requests)
	}
	var fv query.FunctionView
	getJSON(t, srv, "/api/func?name=main.query&trace-id="+traceHex(3), &fv)
	if fv.Calls != 1 || fv.Errors != 0 || len(fv.Chains) != 1 || len(fv.Chains[0].Path) != 2 || fv.Chains[0].Path[0].Name != "main.handle" {
		t.Errorf("main.query in request 3: %d calls, %d errors, chains %+v", fv.Calls, fv.Errors, fv.Chains)
	}

	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/api/tree?trace-id=" + traceHex(9), 404, "no span of the trace has that trace id"},
		{"/api/tree?trace-id=xyz", 400, "parameter trace-id"},
		{"/api/tree?g=999", 404, "no traced call ran in goroutine 999"},
		{"/api/tree?g=1", 200, `"goroutines":[`},
		{"/api/timeline?span=%28", 400, "parameter span"},
		{"/api/lanes?span=nothing", 404, "matches no span"},
		{"/api/func?name=main.other&" + req1, 404, "no function main.other in the calls of the requests selected"},
		{"/api/flame?" + req1, 200, `"names":[`},
		{"/api/flame?weight=cpu&" + req1, 400, "has no CPU profile"},
		{"/api/requests?top=0", 400, "parameter top"},
		{"/api/requests?top=1001", 400, "parameter top"},
		{"/api/failed?limit=0", 400, "parameter limit"},
	} {
		res, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		body.ReadFrom(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.code || !strings.Contains(body.String(), tc.want) {
			t.Errorf("GET %s: %d %.300q, want %d with %q", tc.path, res.StatusCode, body.String(), tc.code, tc.want)
		}
	}
}

// TestNoRequests: a trace without spans has no requests to list, and a
// view asked for one says why it shows nothing.
func TestNoRequests(t *testing.T) {
	tr := loadTrace(t, 10)
	if tr.req != nil || tr.ix.hasSpans || tr.ix.spans != nil {
		t.Fatalf("a trace without spans keeps %+v", tr.req)
	}
	for _, l := range tr.ix.lanes {
		if l.span != nil {
			t.Fatalf("lane %d has spans", l.g)
		}
	}
	srv := scriptServer(t, "1 +main.main 0\n1 - 10")
	var list requestList
	getJSON(t, srv, "/api/requests", &list)
	if list.Total != 0 || len(list.Spans) != 0 {
		t.Errorf("requests of a trace without spans: %+v", list)
	}
	res, err := http.Get(srv.URL + "/api/tree?trace-id=" + traceHex(1))
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(res.Body)
	res.Body.Close()
	if res.StatusCode != 404 || !strings.Contains(body.String(), "the trace has no OpenTelemetry spans") {
		t.Errorf("tree of a request of a trace without spans: %d %s", res.StatusCode, body.String())
	}
}

// TestRequestsAgreeWithCommandLine narrows the views to random requests of
// random traces with spans, and checks that they show the calls the
// command line's --trace-id and --span give: the call tree, under random
// filters too, what calltrail replay prints from a reader told the spans
// to keep; the overview, the timeline and the function view as many
// calls as the analysis of that reader counts.
func TestRequestsAgreeWithCommandLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 60 {
		script, end, names := spansScript(rng)
		data, err := tracetest.Build(script)
		if err != nil {
			t.Fatalf("%v\n%s", err, script)
		}
		path := filepath.Join(t.TempDir(), "trace.out")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if tr.req == nil {
			continue // no span ran a call
		}
		s := New(tr, nil, nil)
		for range 6 {
			q := url.Values{}
			sp := tr.req.index.Spans[rng.IntN(len(tr.req.index.Spans))]
			f := &filter.Filter{}
			switch rng.IntN(3) {
			case 0:
				q.Set("trace-id", sp.Trace.String())
				f.TraceID = sp.Trace.String()
			case 1:
				q.Set("span", "^"+sp.Name+"$")
				f.Span = regexp.MustCompile("^" + sp.Name + "$")
			default:
				q.Set("trace-id", sp.Trace.String())
				f.TraceID = sp.Trace.String()
				name := names[rng.IntN(len(names))]
				q.Set("span", name)
				f.Span = regexp.MustCompile(name)
			}
			keep, err := cmdReader(data, f)
			if err != nil {
				if _, err := s.indexFor(f); err == nil {
					t.Fatalf("trial %d, %s: the command line says %v, the server shows calls", trial, q.Encode(), err)
				}
				continue
			}
			p := keep()
			calls := analysis.Analyze(p, analysis.Options{})
			ix, err := s.indexFor(f)
			if err != nil {
				t.Fatalf("trial %d, %s: %v", trial, q.Encode(), err)
			}
			if n := query.New("", calls).Calls(); uint64(ix.calls) != n {
				t.Fatalf("trial %d, %s: the index holds %d calls, the command line's analysis %d\n%s", trial, q.Encode(), ix.calls, n, script)
			}
			ov, err := s.overview(nil, nil, &params{q: q})
			if err != nil || ov.(overviewJSON).Calls != uint64(ix.calls) {
				t.Fatalf("trial %d, %s: overview of %d calls (%v), want %d", trial, q.Encode(), ov.(overviewJSON).Calls, err, ix.calls)
			}
			tq := url.Values{"px": {"20000"}, "to": {fmt.Sprint(end + 1)}}
			for k, v := range q {
				tq[k] = v
			}
			tl, err := s.timeline(nil, httptestRequest(), &params{q: tq})
			if err != nil {
				t.Fatal(err)
			}
			bars := 0
			for _, l := range tl.(timelineJSON).Lanes {
				for j := 0; j < len(l.Items); j += itemLen {
					bars += int(l.Items[j+4])
				}
			}
			if bars != ix.calls {
				t.Fatalf("trial %d, %s: the timeline's bars hold %d calls, want %d", trial, q.Encode(), bars, ix.calls)
			}
			// The tree, under filters of its own too.
			if rng.IntN(2) == 0 {
				q.Set("F", "main.b")
				f.Focus = regexp.MustCompile("main.b")
			}
			if d := rng.IntN(3); d > 0 {
				q.Set("D", fmt.Sprint(d))
				f.MaxDepth = d
			}
			if rng.IntN(3) == 0 {
				f.From = time.Duration(rng.Int64N(end))
				q.Set("window", fmt.Sprintf("%dns-", f.From))
			}
			var want bytes.Buffer
			if err := replay.Write(&want, keep(), f, replay.Options{}); err != nil {
				t.Fatal(err)
			}
			if got, w := treeCalls(t, s, q), replayCalls(want.String()); got != w {
				t.Fatalf("trial %d, %s: the tree shows\n%s\nreplay prints\n%s\nscript:\n%s", trial, q.Encode(), got, w, script)
			}
		}
	}
}

// cmdReader makes the command line's selection of f's requests in the
// trace data (see calltrail's openTrace): keep returns a reader of their
// calls alone.
func cmdReader(data []byte, f *filter.Filter) (keep func() *tracefile.Reader, err error) {
	r, _ := tracefile.NewReader(bytes.NewReader(data))
	ix, err := spans.Read(r)
	if err != nil {
		return nil, err
	}
	sel, err := ix.Select(f.TraceID, f.Span)
	if err != nil {
		return nil, err
	}
	return func() *tracefile.Reader {
		r, _ := tracefile.NewReader(bytes.NewReader(data))
		r.InheritSpans(ix.Inherit)
		r.KeepSpans(sel)
		return r
	}, nil
}

func httptestRequest() *http.Request {
	r, _ := http.NewRequest("GET", "/", nil)
	return r
}

// spansScript writes a tracetest script of three goroutines, each a
// random tree of calls of main.a to main.e, some of which start spans
// around their callees, goroutines 2 and 3 started in goroutine 1's
// calls; it returns the script, its end, and the names of its spans.
func spansScript(rng *rand.Rand) (string, int64, []string) {
	var b strings.Builder
	at := int64(0)
	span := uint64(0)
	names := []string{"GET", "db", "work"}
	started := 1
	var call func(g, depth int, open []uint64)
	call = func(g, depth int, open []uint64) {
		at += 1 + rng.Int64N(20)
		fn := fmt.Sprintf("main.%c", 'a'+rng.IntN(5))
		fmt.Fprintf(&b, "%d +%s %d\n", g, fn, at)
		var mine uint64
		if rng.IntN(3) == 0 {
			span++
			mine = span
			parent := uint64(0)
			if len(open) > 0 && rng.IntN(3) > 0 {
				parent = open[len(open)-1]
			}
			at++
			fmt.Fprintf(&b, "%d span %d %d %s %d\n", g, mine, parent, names[rng.IntN(len(names))], at)
			open = append(open, mine)
		}
		for n := rng.IntN(4); depth < 5 && n > 0; n-- {
			if g == 1 && started < 3 && rng.IntN(3) == 0 {
				started++
				at++
				fmt.Fprintf(&b, "%d go 1 %s %d\n", started, fn, at)
			}
			call(g, depth+1, open)
		}
		if mine != 0 && rng.IntN(4) > 0 {
			at++
			fmt.Fprintf(&b, "%d end %d %d\n", g, mine, at) // else it never ends
		}
		at += 1 + rng.Int64N(20)
		if rng.IntN(8) == 0 {
			fmt.Fprintf(&b, "%d -failed %d\n", g, at)
		} else {
			fmt.Fprintf(&b, "%d - %d\n", g, at)
		}
	}
	for g := 1; g <= 3; g++ {
		for range 1 + rng.IntN(3) {
			call(g, 1, nil)
		}
	}
	return b.String(), at, names
}

// TestRequestsParams: no parameter makes a view fail worse than a 4xx,
// with a short message, on a trace with spans or without; a trace id
// is read in either case, as the command line reads it.
func TestRequestsParams(t *testing.T) {
	for _, script := range []string{requestsScript, "1 +main.main 0\n1 - 10"} {
		h := scriptServer(t, script)
		for _, view := range []string{"requests", "failed", "tree", "timeline", "lanes", "lane", "overview", "flame", "func"} {
			for _, q := range []string{"", "trace-id=", "trace-id=" + traceHex(1), "trace-id=" + strings.ToUpper(traceHex(1)), "span=.*", "span=%28",
				"trace-id=zz", "trace-id=" + strings.Repeat("f", 64), "span=" + strings.Repeat("a", 2000), "top=-1", "limit=99999999999999999999",
				"g=1&in=1&call=0&trace-id=" + traceHex(3), "name=main.handle&span=GET", "funcs=11&span=db", "g=2&span=^db&in=2", "px=1&from=0&to=1&span=."} {
				res, err := http.Get(h.URL + "/api/" + view + "?" + q)
				if err != nil {
					t.Fatal(err)
				}
				var body bytes.Buffer
				body.ReadFrom(res.Body)
				res.Body.Close()
				if res.StatusCode >= 500 || res.StatusCode >= 400 && body.Len() > 300 {
					t.Errorf("%s?%s: %d %.300s", view, q, res.StatusCode, body.String())
				}
				if script == requestsScript && strings.Contains(q, "trace-id="+strings.ToUpper(traceHex(1))) && view != "lane" && view != "func" && res.StatusCode != 200 {
					t.Errorf("%s?%s: %d %s", view, q, res.StatusCode, body.String())
				}
			}
		}
	}
}

// FuzzRequests narrows the views to the requests of generated traces,
// damaged or hostile (tracetest.Generate): every view answers without a
// 5xx, and the timeline index of a request holds the calls the command
// line's --trace-id reads.
func FuzzRequests(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		[]byte("\x01\x00\x00\x00\x04\x00\x01\x01\x00\x00\x04\x05\x00\x04\x05\x00"),
		[]byte("\x00\x00\x00\x03\x00\x00\x00\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b"),
		[]byte("\x09\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a"),
	} {
		f.Add(seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		trace := tracetest.Generate(data)
		path := filepath.Join(dir, "fuzz.out")
		if err := os.WriteFile(path, trace, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := Load(path)
		if err != nil {
			return
		}
		s := New(tr, nil, nil)
		h := s.Handler()
		var ids []string
		if tr.req != nil {
			for _, sp := range tr.req.slowest[:min(3, len(tr.req.slowest))] {
				ids = append(ids, sp.Trace.String())
			}
		}
		for _, id := range append(ids, traceHex(1)) {
			for _, view := range []string{"requests?top=5", "failed?limit=3", "tree", "tree?in=1", "lanes", "timeline?px=100", "overview", "flame?weight=cpu", "func?name=main.main"} {
				sep := "?"
				if strings.Contains(view, "?") {
					sep = "&"
				}
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodGet, "/api/"+view+sep+"trace-id="+id, nil)
				req.Host = "localhost"
				h.ServeHTTP(rec, req)
				if rec.Code >= 500 {
					t.Fatalf("%s trace-id=%s: %d %s", view, id, rec.Code, rec.Body)
				}
			}
			keep, err := cmdReader(trace, &filter.Filter{TraceID: id})
			if err != nil {
				continue
			}
			ix, err := s.indexFor(&filter.Filter{TraceID: id})
			if err != nil {
				t.Fatalf("trace-id=%s: the command line reads calls, the server says %v", id, err)
			}
			if n := query.New("", analysis.Analyze(keep(), analysis.Options{})).Calls(); uint64(ix.calls) != n {
				t.Fatalf("trace-id=%s: the index holds %d calls, the command line's analysis %d", id, ix.calls, n)
			}
		}
	})
}
