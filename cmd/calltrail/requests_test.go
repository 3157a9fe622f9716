//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/clitest"
	"github.com/calltrail/calltrail/internal/tracetest"
)

// request is one request the test sends the orders service: its trace id,
// the caller's span id, the order's size and the CPU time each item takes.
type request struct {
	trace, parent string
	n             int
	spin          time.Duration
}

// servedOrders builds testdata/orders, a service that uses the
// OpenTelemetry SDK and otelhttp, with calltrail build, unchanged; serves
// reqs, two callers at a time, each over one kept-alive connection, so
// that one goroutine of the server serves several requests in turn; and
// returns the trace. env is more of the service's environment.
func servedOrders(t *testing.T, reqs []request, env ...string) string {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "orders.trace")
	srv, addr := startOrders(t, buildOrders(t), append(env, "CALLTRAIL_OUT="+trace))
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	var wg sync.WaitGroup
	for c := 0; c < 2; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
			for i := c; i < len(reqs); i += 2 {
				r := reqs[i]
				req, _ := http.NewRequest("GET", fmt.Sprintf("http://%s/orders/%d?spin=%s", addr, r.n, r.spin), nil)
				req.Header.Set("traceparent", "00-"+r.trace+"-"+r.parent+"-01")
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body) // so that the connection is reused
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	if resp, err := http.Get("http://" + string(addr) + "/quit"); err == nil {
		resp.Body.Close()
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the service: %v", err)
		}
	case <-time.After(time.Minute):
		srv.Process.Kill()
		t.Fatal("the service did not end in a minute")
	}
	return trace
}

// buildOrders builds testdata/orders with calltrail build and the flags
// given, once a test binary for each set of flags, and returns the
// binary. Each build takes seconds of CPU, mostly to link.
func buildOrders(tb testing.TB, flags ...string) string {
	tb.Helper()
	calltrail, dir := clitest.Binary(tb), clitest.Dir(tb)
	v, _ := ordersBuilt.LoadOrStore(strings.Join(flags, " "), &built{})
	b := v.(*built)
	b.once.Do(func() {
		f, err := os.CreateTemp(dir, "orders")
		if err != nil {
			b.err = err
			return
		}
		f.Close()
		build := exec.Command(calltrail, append(append([]string{"build", "-o", f.Name()}, flags...), ".")...)
		build.Dir = filepath.Join("testdata", "orders")
		if out, err := build.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("calltrail build: %v\n%s", err, out)
		}
		b.bin = f.Name()
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.bin
}

// ordersBuilt holds buildOrders's builds, by their flags.
var ordersBuilt sync.Map

// built is a program built once for the tests that run it.
type built struct {
	once sync.Once
	bin  string
	err  error
}

// startOrders starts the orders service bin with more environment env and
// arguments args, and returns it and the address it serves once it does.
func startOrders(tb testing.TB, bin string, env []string, args ...string) (*exec.Cmd, string) {
	tb.Helper()
	addrFile := filepath.Join(tb.TempDir(), "addr")
	srv := exec.Command(bin, append([]string{"-addr-file", addrFile}, args...)...)
	srv.Env = append(os.Environ(), env...)
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		tb.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if addr, _ := os.ReadFile(addrFile); len(addr) > 0 {
			return srv, string(addr)
		}
		if time.Now().After(deadline) {
			srv.Process.Kill()
			srv.Wait()
			tb.Fatal("the service did not start in a minute")
		}
	}
}

// TestRequests checks that every call of a traced service is tied to
// exactly the request that made it, in the goroutines the request started
// too, with requests served concurrently and one after another on the
// same goroutines of the server: calltrail spans counts each request's
// calls as the service makes them, and chains and report narrowed to a
// request count its calls alone.
func TestRequests(t *testing.T) {
	var reqs []request
	for i := 1; i <= 8; i++ {
		reqs = append(reqs, request{trace: fmt.Sprintf("%032x", 0xabc000+i), parent: fmt.Sprintf("%016x", 0xdef000+i), n: i})
	}
	trace := servedOrders(t, reqs)

	code, out, errOut := runCmd("spans", "--json", "--top", "0", trace)
	if code != 0 {
		t.Fatalf("spans: %s", errOut)
	}
	var list []struct {
		TraceID    string `json:"trace_id"`
		SpanID     string `json:"span_id"`
		Parent     string `json:"parent_span_id"`
		Remote     bool   `json:"remote"`
		Kind       int    `json:"kind"`
		Name       string `json:"name"`
		Calls      uint64 `json:"calls"`
		Goroutines int    `json:"goroutines"`
		DurationNs int64  `json:"duration_ns"`
		Goroutine  uint64 `json:"goroutine"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	server := map[string]int{} // trace id -> index of its server span
	for i, s := range list {
		if s.Kind == 2 && s.Remote {
			server[s.TraceID] = i
		}
	}
	served := map[uint64]int{} // requests by the server goroutine that served them
	for _, i := range server {
		served[list[i].Goroutine]++
	}
	if len(served) >= len(reqs) {
		t.Errorf("every request had a server goroutine of its own (%v): the test means to share them", served)
	}
	totalPrice := 0
	for _, r := range reqs {
		i, ok := server[r.trace]
		if !ok {
			t.Errorf("trace %s: no server span under the caller's span in %s", r.trace, out)
			continue
		}
		s := list[i]
		// orders, load, query, n times (the goroutine's func and
		// price), sum.
		if want := uint64(3 + 2*r.n + 1); s.Calls != want {
			t.Errorf("trace %s (n=%d): %d calls, want %d", r.trace, r.n, s.Calls, want)
		}
		if want := 1 + r.n; s.Goroutines != want {
			t.Errorf("trace %s (n=%d): %d goroutines, want %d", r.trace, r.n, s.Goroutines, want)
		}
		if s.Parent != r.parent {
			t.Errorf("trace %s: parent %s, want the caller's %s", r.trace, s.Parent, r.parent)
		}
		if s.DurationNs < int64(r.n)*int64(time.Millisecond) {
			t.Errorf("trace %s: %dns, shorter than its query's %dms", r.trace, s.DurationNs, r.n)
		}
		totalPrice += r.n

		code, out, errOut := runCmd("chains", "--json", "--trace-id", r.trace, "main.price", trace)
		if code != 0 {
			t.Fatalf("chains --trace-id %s: %s", r.trace, errOut)
		}
		if got := chainCalls(t, out); got != r.n {
			t.Errorf("chains --trace-id %s main.price: %d calls, want %d", r.trace, got, r.n)
		}
		code, out, errOut = runCmd("report", "--json", "--trace-id", r.trace, trace)
		if code != 0 {
			t.Fatalf("report --trace-id %s: %s", r.trace, errOut)
		}
		if got, want := reportCalls(t, out), 3+2*r.n+1; got != want {
			t.Errorf("report --trace-id %s: %d calls, want %d", r.trace, got, want)
		}
	}
	code, out, errOut = runCmd("chains", "--json", "main.price", trace)
	if code != 0 {
		t.Fatalf("chains: %s", errOut)
	}
	if got := chainCalls(t, out); got != totalPrice {
		t.Errorf("chains main.price: %d calls, want %d, the requests' sum", got, totalPrice)
	}
	// --span narrows to the spans named and those under them.
	code, out, errOut = runCmd("report", "--json", "--span", "^db\\.query$", "--trace-id", reqs[2].trace, trace)
	if code != 0 {
		t.Fatalf("report --span: %s", errOut)
	}
	if got := reportCalls(t, out); got != 1 {
		t.Errorf("report --span db.query: %d calls, want 1 (main.query)", got)
	}
	code, _, errOut = runCmd("chains", "--trace-id", strings.Repeat("1", 32), "main.price", trace)
	if code == 0 || !strings.Contains(errOut, "no span of the trace has that trace id") {
		t.Errorf("chains of an unknown trace id: exit %d, %q", code, errOut)
	}
}

// chainCalls sums the calls of chains --json's chains.
func chainCalls(t *testing.T, out string) int { return sumCalls(t, out, "chains") }

// reportCalls sums the calls of report --json's functions.
func reportCalls(t *testing.T, out string) int { return sumCalls(t, out, "functions") }

// sumCalls sums the calls of the entries of list, a field of the JSON
// object out.
func sumCalls(t *testing.T, out, list string) int {
	t.Helper()
	var v map[string]json.RawMessage
	var entries []struct {
		Calls int `json:"calls"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if err := json.Unmarshal(v[list], &entries); err != nil && v[list] != nil {
		t.Fatalf("%s: %v: %s", list, err, out)
	}
	n := 0
	for _, e := range entries {
		n += e.Calls
	}
	return n
}

// TestRequestsInCollector sends the orders service's own spans and
// calltrail's spans of its calls to one OpenTelemetry Collector: every
// call's span is in the trace of the request it ran for, the outermost
// calls of each goroutine children of the service's span they ran under,
// as Jaeger or Tempo would show them.
func TestRequestsInCollector(t *testing.T) {
	col := startCollector(t)
	var reqs []request
	for i := 1; i <= 4; i++ {
		reqs = append(reqs, request{trace: fmt.Sprintf("%032x", 0xfeed00+i), parent: fmt.Sprintf("%016x", 0xbeef00+i), n: i})
	}
	trace := servedOrders(t, reqs, "OTEL_EXPORTER_OTLP_ENDPOINT="+strings.Replace(col.URL, "otlp://", "http://", 1))
	code, out, errOut := runCmd("report", "--json", trace)
	if code != 0 {
		t.Fatalf("report: %s", errOut)
	}
	calls := reportCalls(t, out)
	if code, _, errOut := runCmd("push", "--to", col.URL, "--spans", ".", trace); code != 0 {
		t.Fatalf("push: %s", errOut)
	}
	// The service's spans: a server span and a db.query span a request,
	// and the server span of /quit.
	own := 2*len(reqs) + 1
	td, err := col.Spans(own+calls, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	type node struct {
		name, trace, parent string
		scope               string
	}
	spans := map[string]node{}
	rs := td.ResourceSpans()
	for i := 0; i < rs.Len(); i++ {
		ss := rs.At(i).ScopeSpans()
		for j := 0; j < ss.Len(); j++ {
			scope := ss.At(j).Scope().Name()
			sp := ss.At(j).Spans()
			for k := 0; k < sp.Len(); k++ {
				s := sp.At(k)
				spans[s.SpanID().String()] = node{s.Name(), s.TraceID().String(), s.ParentSpanID().String(), scope}
			}
		}
	}
	if len(spans) != own+calls {
		t.Errorf("the Collector holds %d spans, want %d of the service and %d of its calls", len(spans), own, calls)
	}
	for _, r := range reqs {
		funcs := map[string]int{}
		for id, s := range spans {
			if s.trace != r.trace || s.scope != "github.com/calltrail/calltrail" {
				continue
			}
			funcs[s.name]++
			// Up from a call's span: calls' spans, then the
			// service's, then the caller's, which is not here.
			p, hops := spans[s.parent], 0
			for ; p.scope == "github.com/calltrail/calltrail" && hops < 100; hops++ {
				if p.trace != r.trace {
					t.Errorf("span %s (%s): its parent is in trace %s, not %s", id, s.name, p.trace, r.trace)
				}
				p = spans[p.parent]
			}
			if p.name == "" || p.trace != r.trace {
				t.Errorf("span %s (%s) of trace %s is not under a span of the service", id, s.name, r.trace)
			}
			if s.name == "main.orders" && (p.parent != r.parent || hops != 0) {
				t.Errorf("main.orders of trace %s: parent %q (caller %s), want the service's server span, under the caller's %s", r.trace, p.name, p.parent, r.parent)
			}
		}
		want := map[string]int{"main.orders": 1, "main.load": 1, "main.query": 1, "main.load.func1": r.n, "main.price": r.n, "main.sum": 1}
		if !reflect.DeepEqual(funcs, want) {
			t.Errorf("trace %s: calls' spans %v, want %v", r.trace, funcs, want)
		}
	}
}

// TestRequestsInStore pushes the orders service's trace to ClickHouse and
// checks that chains --from --trace-id counts each request's calls as
// chains --trace-id of the file does.
func TestRequestsInStore(t *testing.T) {
	servers := startShards(t)
	var reqs []request
	for i := 1; i <= 4; i++ {
		reqs = append(reqs, request{trace: fmt.Sprintf("%032x", 0x5707e00+i), parent: fmt.Sprintf("%016x", 0x5707e00+i), n: i})
	}
	trace := servedOrders(t, reqs)
	store := "clickhouse://" + servers[0].Addr() + "/requests"
	if code, _, errOut := runCmd("push", "--to", store, trace); code != 0 {
		t.Fatalf("push: %s", errOut)
	}
	for _, r := range reqs {
		for _, fn := range []string{"main.price", "main.query"} {
			code, file, errOut := runCmd("chains", "--json", "--slowest", "0", "--trace-id", r.trace, fn, trace)
			if code != 0 {
				t.Fatalf("chains --trace-id: %s", errOut)
			}
			code, stored, errOut := runCmd("chains", "--json", "--slowest", "0", "--from", store, "--trace-id", r.trace, fn)
			if code != 0 {
				t.Fatalf("chains --from --trace-id: %s", errOut)
			}
			if chainCalls(t, file) != chainCalls(t, stored) || chainCalls(t, stored) == 0 {
				t.Errorf("trace %s, %s: %d calls in the file, %d in the store", r.trace, fn, chainCalls(t, file), chainCalls(t, stored))
			}
		}
	}
}

// TestRealModuleSpans runs the tests of otelhttp, OpenTelemetry's own
// instrumentation of net/http, under calltrail test: they start server,
// client and internal spans with the SDK, which calltrail records unasked
// (the tests alone import it). Each trace's calls, as calltrail spans adds
// them up over the trace's outermost spans in the process, are the calls
// report --trace-id finds.
func TestRealModuleSpans(t *testing.T) {
	clitest.Long(t)
	bin := clitest.Binary(t)
	dir, _ := clitest.Fetch(t, "go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp@v0.70.0")
	traces := filepath.Join(t.TempDir(), "traces")
	cmd := exec.Command(bin, "test", "-o", traces, "-count=1", ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("calltrail test: %v\n%s", err, out)
	}
	trace := filepath.Join(traces, "otelhttp.test.trace")
	code, out, errOut := runCmd("spans", "--json", "--top", "0", trace)
	if code != 0 {
		t.Fatalf("spans: %s", errOut)
	}
	var list []struct {
		TraceID string `json:"trace_id"`
		SpanID  string `json:"span_id"`
		Parent  string `json:"parent_span_id"`
		Kind    int    `json:"kind"`
		Calls   int    `json:"calls"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	ids, kinds := map[string]bool{}, map[int]int{}
	for _, s := range list {
		ids[s.SpanID] = true
		kinds[s.Kind]++
	}
	if len(list) < 20 || kinds[2] == 0 || kinds[3] == 0 {
		t.Fatalf("%d spans, by kind %v: want server and client spans, at least 20", len(list), kinds)
	}
	calls := map[string]int{} // by trace: its outermost spans' calls
	for _, s := range list {
		if !ids[s.Parent] {
			calls[s.TraceID] += s.Calls
		}
	}
	checked := 0
	for trace2, want := range calls {
		if want == 0 || checked == 10 {
			continue
		}
		checked++
		code, out, errOut := runCmd("report", "--json", "--trace-id", trace2, trace)
		if code != 0 {
			t.Fatalf("report --trace-id %s: %s", trace2, errOut)
		}
		if got := reportCalls(t, out); got != want {
			t.Errorf("trace %s: report --trace-id counts %d calls, spans %d", trace2, got, want)
		}
	}
	if checked == 0 {
		t.Error("no trace ran traced calls")
	}
}

// TestRequestCPU checks that a request's time on CPU is its own: of two
// requests of six items each, one working 40 ms on each item and the
// other not at all, the CPU profile's samples (labelled with their spans)
// put the first's on it, and none on the second.
func TestRequestCPU(t *testing.T) {
	busy := request{trace: fmt.Sprintf("%032x", uint32(0xc0ffee01)), parent: fmt.Sprintf("%016x", uint32(0xc0ffee01)), n: 6, spin: 40 * time.Millisecond}
	idle := request{trace: fmt.Sprintf("%032x", uint32(0xc0ffee02)), parent: fmt.Sprintf("%016x", uint32(0xc0ffee02)), n: 6}
	trace := servedOrders(t, []request{busy, idle}, "CALLTRAIL_PROFILES=cpu")
	priceCPU := func(args ...string) int64 {
		t.Helper()
		code, out, errOut := runCmd(append(append([]string{"report", "--json", "--top", "0"}, args...), trace)...)
		if code != 0 {
			t.Fatalf("report %v: %s", args, errOut)
		}
		var v struct {
			Functions []struct {
				Name  string `json:"name"`
				CPUNs *int64 `json:"cpu_ns"`
			} `json:"functions"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		for _, f := range v.Functions {
			if f.Name == "main.price" {
				if f.CPUNs == nil {
					t.Fatalf("report %v: no time on CPU: %s", args, out)
				}
				return *f.CPUNs
			}
		}
		t.Fatalf("report %v: no main.price", args)
		return 0
	}
	// Some 240 ms of work, sampled every 10 ms: all of main.price's
	// samples are the busy request's.
	all, mine := priceCPU(), priceCPU("--trace-id", busy.trace)
	if all < 60e6 || mine != all {
		t.Errorf("main.price on CPU: %v in all, %v in the busy request", time.Duration(all), time.Duration(mine))
	}
	// The idle request's report has too few samples to split its time:
	// its own analysis says so, and takes none of the busy one's.
	code, out, errOut := runCmd("report", "--json", "--trace-id", idle.trace, trace)
	if code != 0 {
		t.Fatalf("report --trace-id idle: %s", errOut)
	}
	if strings.Contains(out, `"cpu_ns"`) {
		t.Errorf("the idle request's report splits time by the busy one's samples: %s", out)
	}
}

// TestSpansNone: a trace without spans says why there may be none; a
// snapshot's window first, where a quiet service started none.
func TestSpansNone(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"1 +main.main 0\n1 - 100\n", "no OpenTelemetry spans: the program started none"},
		{"meta mode flight\nmeta window_start_ns 1000\nmeta window_end_ns 2000001000\n1 +main.main 0\n1 - 2000000000\n", "no OpenTelemetry spans: none started in the snapshot's 2s, or"},
	} {
		data, err := tracetest.Build(tc.script)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "t.out")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if code, stdout, stderr := runCmd("spans", path); code != 0 || !strings.Contains(stdout, tc.want) {
			t.Errorf("spans: exit %d, %q %q; want %q", code, stdout, stderr, tc.want)
		}
	}
}
