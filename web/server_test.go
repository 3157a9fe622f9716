package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/query"
)

func TestAPI(t *testing.T) {
	srv := httptest.NewServer(New(loadTrace(t, 100), nil, nil).Handler())
	defer srv.Close()
	for _, tc := range []struct {
		path string
		code int
		want string // in the body
	}{
		{"/", 200, "<title>calltrail</title>"},
		{"/static/app.js", 200, "hashchange"},
		{"/api/overview", 200, `"calls":203`},
		{"/api/overview", 200, `"program":"/tmp/synth -n"`},
		{"/api/overview", 200, `"name":"synth -n"`},
		{"/api/names", 200, `"main.leaf"`},
		{"/api/flame", 200, `"names":[`},
		{"/api/flame?mode=self&weight=wall", 200, `"value_ns":[`},
		{"/api/flame?mode=up", 400, "parameter mode"},
		{"/api/flame?weight=cpu", 400, "has no CPU profile"}, // not a graph of zeros
		{"/api/flame?weight=wait&mode=self", 400, "has no CPU profile"},
		{"/api/func?name=main.leaf", 200, `"path":[{"name":"main.main"},{"name":"main.work"},{"name":"main.leaf"}]`},
		{"/api/func?name=main.D", 200, `"spawned_from":[[{"name":"main.main"}]]`},
		{"/api/func?name=main.D", 200, `"exit":"panic"`},
		{"/api/lanes", 200, `"g":[1,2]`},
		{"/api/lane?g=2", 200, `"creator":"main.main"`},
		{"/api/lane?g=2", 200, `"started_in":[{"name":"main.main"}]`},
		{"/api/timeline?from=0&to=2000000&px=100&l0=0&l1=2", 200, `"lanes":[{"lane":0`},
		{"/api/tree", 200, `"goroutines":[{"g":1`},
		{"/api/tree?in=1", 200, `"rows":[{"call":0,"func":1`},
		{"/api/tree?in=1&F=main%5C.leaf", 200, `"rows":[{"call":2,"func":3`},
		{"/api/tree?in=1&call=0&F=main%5C.leaf", 404, "not shown"},

		// Bad requests: short messages, 4xx.
		{"/api/func", 400, "parameter name"},
		{"/api/func?name=main.nope", 404, `no function "main.nope" in the trace`},
		{"/api/func?name=main.lea", 404, "closest: main.leaf"},
		{"/api/lane?g=99", 404, "no goroutine"},
		{"/api/lane?g=x", 400, "parameter g"},
		{"/api/lane", 400, "parameter g"},
		{"/api/timeline?from=10&to=5", 400, "parameter to"},
		{"/api/timeline?px=0", 400, "parameter px"},
		{"/api/timeline?px=1e3", 400, "parameter px"},
		{"/api/timeline?l0=5&l1=1", 400, "l0 and l1"},
		{"/api/timeline?l0=0&l1=100000", 400, "l0 and l1"},
		// A filter a view does not apply is refused, not ignored.
		{"/api/flame?F=main.leaf", 400, "parameter F: this view takes trace-id and span of the filters"},
		{"/api/func?name=main.leaf&g=2", 400, "parameter g"},
		{"/api/overview?window=1ms-", 400, "parameter window"},
		{"/api/tree?F=(", 400, "parameter F"},
		{"/api/tree?window=2s-1s", 400, "parameter window"},
		{"/api/tree?t=soon", 400, "parameter t"},
		{"/api/tree?in=77", 404, "no goroutine"},
		{"/api/tree?in=1&call=100000", 404, "no such call"},
		{"/api/tree?in=1&call=1&N=main.work", 404, "not shown"},
		{"/api/nothing", 404, "not found"},

		// Nothing but the embedded assets is served.
		{"/static/../load.go", 404, ""},
		{"/static/..%2fload.go", 404, ""},
		{"/static/%2e%2e/%2e%2e/go.mod", 404, ""},
		{"/static/assets/index.html", 404, ""},
		{"/static/", 404, ""},
		{"/etc/passwd", 404, ""},
		{"/..%2f..%2fgo.mod", 404, ""},
		{"/index.html", 404, ""},
	} {
		res, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("GET %s: %d %.300q, want %d with %q", tc.path, res.StatusCode, body, tc.code, tc.want)
		}
		if res.StatusCode >= 400 && len(body) > 200 {
			t.Errorf("GET %s: error message of %d bytes", tc.path, len(body))
		}
	}
}

func TestMethodsAndHosts(t *testing.T) {
	h := New(loadTrace(t, 10), nil, nil).Handler()
	for _, tc := range []struct {
		method, host string
		code         int
	}{
		{"GET", "127.0.0.1:8080", 200},
		{"GET", "localhost:8080", 200},
		{"GET", "[::1]:8080", 200},
		{"HEAD", "localhost", 200},
		{"POST", "localhost", 405},
		{"DELETE", "localhost", 405},
		{"GET", "evil.example:8080", 403},
		{"GET", "localhost.evil.example", 403},
	} {
		r := httptest.NewRequest(tc.method, "/api/overview", nil)
		r.Host = tc.host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.code {
			t.Errorf("%s with Host %s: %d, want %d", tc.method, tc.host, w.Code, tc.code)
		}
	}
	// A page of another site is refused what it asks in the background;
	// a link followed from one, and the UI's own requests, are answered.
	for _, tc := range []struct {
		site, mode, origin string
		code               int
	}{
		{"cross-site", "cors", "", 403},
		{"cross-site", "no-cors", "", 403},
		{"same-site", "cors", "", 403},
		{"cross-site", "navigate", "", 200},
		{"same-origin", "cors", "http://localhost:8080", 200},
		{"none", "navigate", "", 200},
		{"", "", "http://evil.example", 403},
		{"", "", "", 200},
	} {
		r := httptest.NewRequest("GET", "/api/overview", nil)
		r.Host = "localhost:8080"
		for k, v := range map[string]string{"Sec-Fetch-Site": tc.site, "Sec-Fetch-Mode": tc.mode, "Origin": tc.origin} {
			if v != "" {
				r.Header.Set(k, v)
			}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.code {
			t.Errorf("Sec-Fetch-Site %q, Sec-Fetch-Mode %q, Origin %q: %d, want %d", tc.site, tc.mode, tc.origin, w.Code, tc.code)
		}
	}
	// What is answered may not be framed by another page.
	r := httptest.NewRequest("GET", "/", nil)
	r.Host = "localhost:8080"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if csp := w.Header().Get("Content-Security-Policy"); w.Code != 200 || !strings.Contains(csp, "frame-ancestors 'none'") || w.Header().Get("X-Frame-Options") != "DENY" {
		t.Errorf("the page: %d, Content-Security-Policy %q, X-Frame-Options %q; want no framing", w.Code, csp, w.Header().Get("X-Frame-Options"))
	}
}

func TestGzip(t *testing.T) {
	h := New(loadTrace(t, 2000), nil, nil).Handler()
	r := httptest.NewRequest("GET", "/api/timeline?from=0&to=3000000&px=4000", nil)
	r.Host = "localhost"
	r.Header.Set("Accept-Encoding", "gzip")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 || w.Header().Get("Content-Encoding") != "gzip" {
		t.Errorf("large response: %d, encoding %q", w.Code, w.Header().Get("Content-Encoding"))
	}
}

// TestBase serves a trace against a base trace: the flame graph carries
// the base's times by chain.
func TestBase(t *testing.T) {
	srv := httptest.NewServer(New(loadTrace(t, 100), loadTrace(t, 50), nil).Handler())
	defer srv.Close()
	var f query.Tree
	get(t, srv.URL+"/api/flame", &f)
	if len(f.Base) != len(f.Value) || f.Base[0] >= f.Value[0] || f.Base[0] == 0 {
		t.Errorf("base totals %v against totals %v", f.Base, f.Value)
	}
}

// TestConcurrentRequests runs requests of every kind at once, for the
// race detector.
func TestConcurrentRequests(t *testing.T) {
	srv := httptest.NewServer(New(loadTrace(t, 1000), loadTrace(t, 10), nil).Handler())
	defer srv.Close()
	paths := []string{"/api/overview", "/api/flame", "/api/func?name=main.work", "/api/lanes", "/api/lane?g=1",
		"/api/timeline?from=0&to=1500000&px=300", "/api/tree?in=1&call=0", "/api/names"}
	var wg sync.WaitGroup
	for i := range 4 * len(paths) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := http.Get(srv.URL + paths[i%len(paths)])
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Errorf("%s: %d", paths[i%len(paths)], res.StatusCode)
			}
		}()
	}
	wg.Wait()
}

func get(t *testing.T, url string, v any) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, b)
	}
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// TestGone checks that a base trace with the same chains leaves none
// gone (query's tests check what is listed when some are).
func TestGone(t *testing.T) {
	base, err := LoadBase(writeTrace(t, 50))
	if err != nil {
		t.Fatal(err)
	}
	if f := loadTrace(t, 100).Flame(base.Trace, false, query.Wall); len(f.Gone) != 0 || f.Base == nil {
		t.Errorf("the same chains in both, yet gone: %+v (base %v)", f.Gone, f.Base)
	}
}

// TestHeldUp: a call held up by the trace writer is drawn as long as it
// lasted, its bar says for how long it was held up, and the call tree
// gives its duration without it, as every other view does.
func TestHeldUp(t *testing.T) {
	srv := scriptServer(t, `
1 +main.main 0
1 +main.work 10
1 - 20
1 held 20 70
1 - 100
`)
	var tree struct {
		Rows []struct {
			Dur  int64 `json:"duration_ns"`
			Held int64 `json:"held_ns"`
		}
	}
	getJSON(t, srv, "/api/tree?in=1", &tree)
	if len(tree.Rows) != 1 || tree.Rows[0].Dur != 50 || tree.Rows[0].Held != 50 {
		t.Errorf("main.main in the call tree: %+v, want 50ns and 50ns held up", tree.Rows)
	}
	var tl struct {
		Lanes []struct{ Items []int64 }
	}
	getJSON(t, srv, "/api/timeline?from=0&to=100&px=1000&l0=0&l1=1", &tl)
	if len(tl.Lanes) != 1 || len(tl.Lanes[0].Items) != 2*itemLen || tl.Lanes[0].Items[1] != 100 || tl.Lanes[0].Items[8] != 50 || tl.Lanes[0].Items[itemLen+8] != 0 {
		t.Errorf("the timeline's bars: %+v, want main.main 100ns long, held up 50ns, and main.work not", tl.Lanes)
	}
}

// TestSnapshotOpenCalls: in a flight recorder's snapshot, a call open
// when the window began counts from the window's start in the call tree,
// the flame graph and the timeline, as in report; the overview gives the
// window's length.
func TestSnapshotOpenCalls(t *testing.T) {
	srv := scriptServer(t, `
meta mode flight
meta window_start_ns 1000
meta window_end_ns 5000
1 +main.main 0
1 +main.serve 100
1 +main.work 1500
1 - 2500
1 - 4000
`)
	var tree struct {
		Rows []struct {
			Start int64 `json:"start_ns"`
			Dur   int64 `json:"duration_ns"`
		}
	}
	getJSON(t, srv, "/api/tree?in=1", &tree)
	if len(tree.Rows) != 1 || tree.Rows[0].Start != 1000 || tree.Rows[0].Dur != 3000 {
		t.Errorf("main.main in the call tree: %+v, want from 1000 for 3000ns", tree.Rows)
	}
	var flame struct {
		Value []int64 `json:"value_ns"`
	}
	getJSON(t, srv, "/api/flame", &flame)
	if len(flame.Value) == 0 || flame.Value[0] != 3000 {
		t.Errorf("the flame graph's root: %v, want 3000ns", flame.Value)
	}
	var o struct {
		Window int64 `json:"window_ns"`
	}
	getJSON(t, srv, "/api/overview", &o)
	if o.Window != 4000 {
		t.Errorf("overview's window %dns, want 4000", o.Window)
	}
}

// TestStartedByReturnedCreator: a goroutine whose first traced call came
// after the call holding its go statement returned, the parent waiting in
// another call, was started by that call: so say its lane and the
// overview's goroutines, not the call open when it began.
func TestStartedByReturnedCreator(t *testing.T) {
	srv := scriptServer(t, `
1 +main.main 0
1 +main.spawn 10
1 - 20
1 +main.waitAll 21
2 go 1 main.spawn 25
2 +main.work 25
2 - 30
1 - 40
1 - 50
`)
	var lane struct {
		StartedIn []struct{ Name string } `json:"started_in"`
	}
	getJSON(t, srv, "/api/lane?g=2", &lane)
	if len(lane.StartedIn) != 2 || lane.StartedIn[1].Name != "main.spawn" {
		t.Errorf("started in %+v, want main.main -> main.spawn", lane.StartedIn)
	}
	var o struct {
		Goroutines struct {
			StartedBy []struct {
				Chain []struct{ Name string } `json:"chain"`
			} `json:"started_by"`
		} `json:"goroutine_summary"`
	}
	getJSON(t, srv, "/api/overview", &o)
	if sb := o.Goroutines.StartedBy; len(sb) != 1 || len(sb[0].Chain) != 2 || sb[0].Chain[1].Name != "main.spawn" {
		t.Errorf("started by %+v, want main.main -> main.spawn", sb)
	}
}

// scriptTrace writes the trace of a tracetest script, and returns its
// path.
func scriptTrace(t *testing.T, script string) string {
	t.Helper()
	data, err := tracetest.Build(script)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "script.out")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// scriptServer serves the trace of a tracetest script.
func scriptServer(t *testing.T, script string) *httptest.Server {
	t.Helper()
	tr, err := Load(scriptTrace(t, script))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(tr, nil, nil).Handler())
	t.Cleanup(srv.Close)
	return srv
}

// TestLaneTitle: a lane is titled by its goroutine's longest outermost
// call: main.main for goroutine 1, which runs the packages' init
// functions first.
func TestLaneTitle(t *testing.T) {
	srv := scriptServer(t, `
1 +main.init.0 0
1 - 10
1 +main.main 20
1 - 1000
2 go 1 main.main 30
2 +main.worker 30
2 - 900
`)
	var names []string
	getJSON(t, srv, "/api/names", &names)
	var lanes struct {
		G     []uint64 `json:"g"`
		Start []uint32 `json:"start_func"`
	}
	getJSON(t, srv, "/api/lanes", &lanes)
	var titles []string
	for _, fn := range lanes.Start {
		titles = append(titles, names[fn])
	}
	if strings.Join(titles, " ") != "main.main main.worker" {
		t.Errorf("lanes %v titled %v, want main.main and main.worker", lanes.G, titles)
	}
}
