//go:build unix

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/calltrail/calltrail/internal/clitest"
)

// TestServeBrowserRequests drives the web UI's Requests view in Chromium
// over a trace of the orders service: it lists the requests slowest
// first; choosing one shows its calls in every goroutine it used, as
// many as calltrail report --trace-id counts, in its call tree and its
// timeline. A trace without spans hides the view, and says why when it
// is opened. It writes requests.png and request.png.
func TestServeBrowserRequests(t *testing.T) {
	p := newPage(t)
	bin := clitest.Binary(t)
	var reqs []request
	for i := 1; i <= 4; i++ {
		// The largest order is of 8 items, not 4: its query, 1ms an
		// item, then outlasts the next's by 5ms, which a busy machine
		// does not undo (one made 3 items' 3ms take 4.36ms).
		n := i
		if i == 4 {
			n = 8
		}
		reqs = append(reqs, request{trace: fmt.Sprintf("%032x", 0x5e1000+i), parent: fmt.Sprintf("%016x", 0x5e1000+i), n: n})
	}
	trace := servedOrders(t, reqs)
	url, _, _ := startServe(t, bin, trace)

	p.open(url + "#overview")
	if hidden := p.number(`+document.querySelector("#nav-requests").hidden`); hidden != 0 {
		t.Error("the trace has spans, and the nav hides Requests")
	}
	// The slowest request is the largest order's: its query takes 8ms.
	// It runs in the goroutine that served it and one per item.
	p.open(url + "#requests")
	var rows [][]string
	p.eval(`Array.from(document.querySelectorAll("#rq-list tbody tr"), (tr) => Array.from(tr.cells, (c) => c.textContent))`, &rows)
	slowest := reqs[3]
	goroutines := slowest.n + 1
	code, out, errOut := runCmd("report", "--json", "--trace-id", slowest.trace, trace)
	if code != 0 {
		t.Fatalf("report --trace-id: %s", errOut)
	}
	want := reportCalls(t, out)
	if len(rows) < 2*len(reqs) || rows[0][4] != slowest.trace || rows[0][5] != "GET" || rows[0][6] != "server" || rows[0][1] != fmt.Sprint(want) || rows[0][2] != fmt.Sprint(goroutines) {
		t.Fatalf("requests listed: %q, want first %s with %d calls in %d goroutines", rows, slowest.trace, want, goroutines)
	}
	p.shot("requests.png")

	p.do(chromedp.Click("#rq-list tbody tr:first-child a.req", chromedp.ByQuery))
	p.wait("the request's view", `location.hash.includes("trace-id=`+slowest.trace+`") && !!document.querySelector("#view-requests[data-ready] #rq-tree")`)
	if s := p.text("#rq-title"); s != "Request "+slowest.trace {
		t.Errorf("title %q", s)
	}
	// Its calls, as the command line counts them.
	if s := p.text("#rq-cards"); !strings.Contains(s, fmt.Sprintf("%dcalls", want)) || !strings.Contains(s, fmt.Sprintf("%dgoroutines", goroutines)) || !strings.Contains(s, "0calls returned an error") {
		t.Errorf("cards: %q, want %d calls in %d goroutines", s, want, goroutines)
	}
	// The call tree: the goroutine that served it open, with main.orders,
	// and those that priced its items.
	p.wait("the served call", `document.querySelector("#rq-tree").textContent.includes("main.orders")`)
	if n := p.number(`document.querySelectorAll("#rq-tree #tree > ul > li").length`); n != float64(goroutines) {
		t.Errorf("the request's call tree has %v goroutines, want %d", n, goroutines)
	}
	p.eval(`document.querySelectorAll("#rq-tree #tree > ul > li > .row .toggle").forEach((t) => t.textContent === "▸" && t.click()); true`, nil)
	p.wait("the priced items", fmt.Sprintf(`document.querySelectorAll("#rq-tree .call").length >= %d`, goroutines))
	var calls []string
	p.eval(`Array.from(document.querySelectorAll("#rq-tree .call"), (e) => e.textContent)`, &calls)
	if got := strings.Count(strings.Join(calls, " "), "main.load.func1"); got != slowest.n {
		t.Errorf("the request's call tree shows %d goroutines' main.load.func1, want %d: %q", got, slowest.n, calls)
	}
	// The timeline: its goroutines, on its time.
	p.wait("the request's timeline", fmt.Sprintf(`+document.querySelector("#rq-timeline #tl-canvas").dataset.bars >= %d`, goroutines))
	if n := p.number(`ct.selLanes["trace-id=` + slowest.trace + `"].g.length`); n != float64(goroutines) {
		t.Errorf("the request's timeline has %v lanes, want %d", n, goroutines)
	}
	// As long as the request, not the trace.
	took, err := time.ParseDuration(rows[0][0])
	if err != nil {
		t.Fatalf("the request's time %q: %v", rows[0][0], err)
	}
	if span, lanes := p.number(`+document.querySelector("#rq-timeline #tl-canvas").dataset.span`), p.number(`ct.selLanes["trace-id=`+slowest.trace+`"].end_ns`); span > 1.5*float64(took) || span >= 0.9*lanes {
		t.Errorf("the request's timeline shows %vns of a trace of %vns, for a request of %v", span, lanes, took)
	}
	p.wait("where its time went", `document.querySelector("#rq-funcs").textContent.includes("main.query")`)
	p.shot("request.png")

	// The flame graph of its calls alone.
	p.do(chromedp.Click(`#view-requests a[href^="#flame"]`, chromedp.ByQuery))
	p.wait("the request's flame graph", `!!document.querySelector("#view-flame[data-ready]") && +document.querySelector("#flame-canvas").dataset.boxes >= 3`)
	if s := p.text("#scope"); !strings.Contains(s, "request "+slowest.trace) {
		t.Errorf("the flame graph does not say it shows the request's calls: %q", s)
	}
	// And the overview, as many calls again.
	p.open(url + "#overview?trace-id=" + slowest.trace)
	if s := p.text("#ov-cards"); !strings.Contains(s, fmt.Sprintf("%dcalls", want)) {
		t.Errorf("the request's overview: %q, want %d calls", s, want)
	}

	if len(p.exceptions) > 0 {
		t.Errorf("JavaScript exceptions: %q", p.exceptions)
	}

	// A trace without spans.
	plain := filepath.Join(t.TempDir(), "chains.out")
	writeChainsTrace(t, plain, true)
	url, _, _ = startServe(t, bin, plain)
	p.open(url + "#overview")
	if hidden := p.number(`+document.querySelector("#nav-requests").hidden`); hidden != 1 {
		t.Error("a trace without spans shows Requests in the nav")
	}
	p.open(url + "#requests")
	if s := p.text("#rq-none"); !strings.Contains(s, "no OpenTelemetry spans") {
		t.Errorf("a trace without spans: %q", s)
	}
}
