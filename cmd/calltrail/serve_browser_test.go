//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/flame"
	"github.com/calltrail/calltrail/internal/clitest"
	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestServeBrowser drives a real headless Chromium through every view of
// calltrail serve, on traces of examples/callchains recorded for the
// test, and writes a screenshot of each view to CALLTRAIL_ARTIFACTS
// (default artifacts/ at the repository's root). Without chromium it
// skips, unless CALLTRAIL_BROWSER=required, as scripts/test.sh sets.
//
// To regenerate the README's screenshots:
//
//	CALLTRAIL_ARTIFACTS=docs/img go test -run TestServeBrowser$ ./cmd/calltrail
func TestServeBrowser(t *testing.T) {
	p := newPage(t)
	bin := clitest.Binary(t)
	dir := t.TempDir()
	trace, base := filepath.Join(dir, "trace.out"), filepath.Join(dir, "base.out")
	for _, out := range []string{base, trace} {
		if out, err := exec.Command(bin, "run", "-o", out, "../../examples/callchains").CombinedOutput(); err != nil {
			t.Fatalf("calltrail run: %v\n%s", err, out)
		}
	}
	url, _, _ := startServe(t, bin, trace, base)

	// Overview.
	p.open(url + "#overview")
	if s := p.text("#ov-cards"); !strings.Contains(s, "goroutines") || !strings.Contains(s, "calls") || !strings.Contains(s, "held up by tracing") {
		t.Errorf("overview cards: %q", s)
	}
	if s := p.text("#ov-total"); !strings.Contains(s, "main.D") || !strings.Contains(s, "main.main") {
		t.Errorf("top functions by total time lack main.D or main.main: %q", s)
	}
	// examples/callchains starts two goroutines from main.main.
	if s := p.text("#ov-goroutines"); !strings.Contains(s, "3 goroutines ran traced code") {
		t.Errorf("goroutines: %q", s)
	}
	if s := p.text("#ov-started"); !strings.Contains(s, "main.main") {
		t.Errorf("chains that started goroutines: %q", s)
	}
	// A bar of the chart opens the timeline at its time. The click goes
	// to the chart's middle by coordinates: chromedp's Click waits on the
	// node's state, and on a loaded machine has hung there.
	var xy []float64
	p.do(chromedp.Evaluate(`(() => { const c = document.querySelector("#ov-live"); c.scrollIntoView({block: "center"});
		const r = c.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`, &xy))
	p.do(chromedp.MouseClickXY(xy[0], xy[1]))
	p.wait("the timeline from the goroutines' chart", `!!document.querySelector("#view-timeline[data-ready]")`)
	p.open(url + "#overview")
	p.shot("overview.png")

	// Flame graph: search, then click a box and see its chains.
	p.open(url + "#flame")
	if n := p.number(`+document.querySelector("#flame-canvas").dataset.boxes`); n < 5 {
		t.Errorf("flame graph drew %v boxes", n)
	}
	p.do(chromedp.SendKeys("#flame-search", "main.D", chromedp.ByQuery))
	p.wait("the search's share", `document.querySelector("#flame-match").textContent.includes("matched")`)
	if s := p.text("#flame-match"); !strings.Contains(s, "%") {
		t.Errorf("search share: %q", s)
	}
	p.shot("flame.png")
	var at struct{ X, Y float64 }
	p.eval(`ct.flameBox("main.C1")`, &at)
	if at.X == 0 {
		t.Fatal("no box for main.C1 in the flame graph")
	}
	p.do(chromedp.MouseClickXY(at.X, at.Y))
	p.wait("the chains of the clicked box", `!!document.querySelector("#flame-chains")`)
	if s := p.text("#flame-chains"); !strings.Contains(s, "main.main → main.A1 → main.B1 → main.C1") {
		t.Errorf("chains of main.C1: %q", s)
	}
	var hash string
	p.eval(`location.hash`, &hash)
	if !strings.Contains(hash, "zoom=") {
		t.Errorf("the zoom is not in the URL: %s", hash)
	}
	p.shot("flame-zoomed.png")
	// Icicle and self time (inverted), each kept in the URL.
	p.do(chromedp.Click("#flame-icicle", chromedp.ByQuery), chromedp.Click(`input[name=mode][value=self]`, chromedp.ByQuery))
	p.wait("the inverted icicle graph", `location.hash.includes("icicle=1") && location.hash.includes("mode=self") && +document.querySelector("#flame-canvas").dataset.boxes >= 5`)
	// A link to a search opens with it done.
	p.open(url + "#flame?q=main%5C.D%24")
	p.wait("the linked search", `document.querySelector("#flame-search").value === "main\\.D$" && document.querySelector("#flame-match").textContent.includes("matched")`)
	// The program sleeps rather than works: its CPU profile holds too
	// few samples to split time on and off CPU, and the page says so
	// rather than show all of it as waiting.
	if n := p.number(`document.querySelectorAll("input[name=weight]").length`); n != 1 || !strings.Contains(p.text("#flame-thin"), "too few CPU samples") {
		t.Errorf("%v weights offered, and no word on the thin CPU profile", n)
	}

	// A function outside the trace: the page says why, in the words of
	// the command line.
	_, _, why := runCmd("chains", "fmt.Println", trace)
	why = strings.TrimPrefix(strings.TrimSpace(why), "calltrail: ")
	p.open(url + "#func?name=fmt.Println")
	p.wait("why fmt.Println is not in the trace", `(document.querySelector("#view-error") || {textContent: ""}).textContent === `+strconv.Quote(why))

	// Function view: every chain, callers, the histogram, a call opened
	// in the timeline.
	p.open(url + "#func?name=main.D")
	if n := p.number(`document.querySelectorAll("#fn-chains .chain").length`); n != 3 {
		t.Errorf("function view of main.D lists %v chains, want 3 (through A1, A2, A3)", n)
	}
	if s := p.text("#fn-callers"); !strings.Contains(s, "main.C1") || !strings.Contains(s, "main.C3") {
		t.Errorf("callers of main.D: %q", s)
	}
	p.do(chromedp.Click("#fn-hist .bar:not(.empty)", chromedp.ByQuery))
	p.wait("the calls of a histogram bar", `document.querySelectorAll("#fn-bucket a.call").length > 0`)
	p.shot("function.png")

	// Timeline: open that call, then zoom with the mouse wheel where
	// main.main runs (to the end of the trace), and pan by dragging.
	p.do(chromedp.Click("#fn-bucket a.call", chromedp.ByQuery))
	p.wait("the timeline", `!!document.querySelector("#view-timeline[data-ready]")`)
	p.wait("bars on the timeline", `+document.querySelector("#tl-canvas").dataset.bars > 0`)
	span := func() float64 { return p.number(`+document.querySelector("#tl-canvas").dataset.span`) }
	p.do(chromedp.Click("#tl-reset", chromedp.ByQuery))
	p.wait("the whole trace", `+document.querySelector("#tl-canvas").dataset.span >= ct.lanes.end_ns`)
	p.eval(`(() => { const r = document.querySelector("#tl-canvas").getBoundingClientRect(); return {X: r.left + r.width * 0.8, Y: r.top + 30}; })()`, &at)
	s0 := span()
	for range 3 {
		p.wheel(at.X, at.Y, -400)
	}
	p.wait("the zoomed timeline", fmt.Sprintf(`+document.querySelector("#tl-canvas").dataset.span < %f`, s0/2))
	p.wait("bars after zooming", `+document.querySelector("#tl-canvas").dataset.bars > 0`)
	t.Logf("timeline zoomed from %.0fns to %.0fns shown", s0, span())
	p.do(chromedp.Click("#tl-reset", chromedp.ByQuery))
	p.wait("the whole trace again", `+document.querySelector("#tl-canvas").dataset.span >= ct.lanes.end_ns`)
	p.wait("the lanes' bars", `+document.querySelector("#tl-canvas").dataset.bars >= 15`)
	// The second lane's title: who started that goroutine, from which chain.
	p.eval(`ct.laneTitle(1)`, &at)
	p.do(chromedp.MouseClickXY(at.X, at.Y))
	p.wait("who started the goroutine", `document.querySelector("#tl-details").textContent.includes("started by g1")`)
	if s := p.text("#tl-details"); !strings.Contains(s, "started in the chain main.main") {
		t.Errorf("the second lane's parent chain: %q", s)
	}
	p.shot("timeline.png")

	// Call tree, with a focus filter, expanded.
	p.open(url + "#tree?F=main%5C.A1")
	p.do(chromedp.Click("#tree li .toggle", chromedp.ByQuery))
	p.wait("the focused calls", `document.querySelector("#tree").textContent.includes("main.A1")`)
	if s := p.text("#tree"); strings.Contains(s, "main.A2") {
		t.Errorf("the focus on main.A1 shows main.A2: %q", s)
	}
	p.eval(`document.querySelectorAll("#tree li li .toggle").forEach((t) => t.textContent === "▸" && t.click())`, nil)
	p.wait("main.B1 under main.A1", `document.querySelector("#tree").textContent.includes("main.B1")`)
	p.shot("tree.png")

	// A malformed filter is an error on the page, not a crash.
	p.open(url + "#tree?F=%28")
	p.wait("the filter's error", `document.querySelector("#tree-error").textContent.includes("parameter F")`)

	// Leaving the flame graph before its data came: once it comes, the
	// stale view must not take over the window's listeners. The
	// timeline's would then linger, and a resize on another view would
	// put the timeline back in the URL.
	p.eval(`ct.flames = {}; ct.api0 = ct.api;
		ct.api = async (what, ...rest) => { if (what === "flame") await new Promise((r) => setTimeout(r, 500)); return ct.api0(what, ...rest); };
		location.hash = "#flame"; true`, nil)
	p.wait("the flame view, waiting for its data", `!!document.querySelector("#view-flame")`)
	p.eval(`location.hash = "#timeline"; true`, nil)
	p.wait("the timeline, and the flame graph's data", `!!document.querySelector("#view-timeline[data-ready]") && !!ct.flames["total/wall"]`)
	p.eval(`ct.api = ct.api0; true`, nil)
	p.open(url + "#overview")
	p.eval(`window.dispatchEvent(new Event("resize")); true`, nil)
	p.do(chromedp.Sleep(300 * time.Millisecond))
	p.eval(`location.hash`, &hash)
	if hash != "#overview" {
		t.Errorf("after a resize on the overview, the URL is %s", hash)
	}

	logTimings(p)
	if len(p.exceptions) > 0 {
		t.Errorf("JavaScript exceptions: %q", p.exceptions)
	}
}

// TestServeBrowserErrors drives the web UI over a trace of
// examples/failing, where main.D fails through two of its three chains:
// the overview's errors, the function view of main.D with its errors and
// the chains it failed through, the timeline's marks on failed calls and
// their errors, the call tree's, and the flame graph coloured by the
// share of calls that failed. It writes errors-function.png and
// errors-timeline.png.
func TestServeBrowserErrors(t *testing.T) {
	p := newPage(t)
	bin := clitest.Binary(t)
	trace := filepath.Join(t.TempDir(), "failing.out")
	if out, err := exec.Command(bin, "run", "-o", trace, "../../examples/failing").CombinedOutput(); err != nil {
		t.Fatalf("calltrail run: %v\n%s", err, out)
	}
	url, _, _ := startServe(t, bin, trace)
	const wrapped = `setting limit: strconv.Atoi: parsing "ten": invalid syntax`

	// Overview: 12 calls of main.D and 10 of main.handle failed.
	p.open(url + "#overview")
	if s := p.text("#ov-cards"); !strings.Contains(s, "22calls returned an error") {
		t.Errorf("overview cards: %q", s)
	}
	if s := p.text("#ov-errors"); !strings.Contains(s, "12 (11.5%)main.D") || !strings.Contains(s, "10 (10.0%)main.handle") {
		t.Errorf("functions that returned errors: %q", s)
	}
	if s := p.text("#ov-total"); !strings.Contains(s, "errors") || !strings.Contains(s, "12 (11.5%)main.D") {
		t.Errorf("top functions by total time lack the errors column: %q", s)
	}

	// Function view: each error with its count, the chains it failed
	// through with theirs, and the chain it never failed through.
	p.open(url + "#func?name=main.D")
	if s := p.text("#fn-errors-card"); !strings.Contains(s, "12") || !strings.Contains(s, "11.5% of calls") {
		t.Errorf("errors card: %q", s)
	}
	var rows [][]string
	p.eval(`Array.from(document.querySelectorAll("#fn-error-messages tbody tr"), (tr) => Array.from(tr.cells, (c) => c.textContent))`, &rows)
	if len(rows) != 3 || strings.Join(rows[0], "|") != "10|*fmt.wrapError|"+wrapped ||
		rows[1][0] != "1" || rows[1][1] != "*fs.PathError" || !strings.HasSuffix(rows[1][2], "/queue.local: no such file or directory") ||
		rows[2][0] != "1" || rows[2][1] != "*fs.PathError" || !strings.HasSuffix(rows[2][2], "/workers.local: no such file or directory") {
		t.Errorf("errors of main.D: %q", rows)
	}
	var failing [][]string // path, count, messages
	p.eval(`Array.from(document.querySelectorAll("#fn-failing .chain"), (c) => [c.querySelector(".path").textContent, c.querySelector("b.error").textContent, c.querySelector(".errors").textContent])`, &failing)
	if len(failing) != 2 || failing[0][0] != "main.serve.func1 → main.handle → main.D" || failing[0][1] != "10 of 100 calls failed" || !strings.Contains(failing[0][2], wrapped) ||
		failing[1][0] != "main.main → main.loadOverrides → main.D" || failing[1][1] != "2 of 2 calls failed" || !strings.Contains(failing[1][2], "workers.local") {
		t.Errorf("chains main.D failed through: %q", failing)
	}
	if s := p.text("#fn-fine"); !strings.Contains(s, "main.main → main.loadDefaults → main.D2 calls, none failed") {
		t.Errorf("chains main.D never failed through: %q", s)
	}
	if s := p.text("#fn-chains"); !strings.Contains(s, "10 failed (10.0%)") || !strings.Contains(s, "2 failed (100.0%)") {
		t.Errorf("every chain of main.D, with its failures: %q", s)
	}
	p.shot("errors-function.png")

	// Timeline: the whole trace marks main.main's two failed calls of
	// main.D in goroutine 1.
	p.open(url + "#timeline")
	p.wait("the failed calls' marks", `+document.querySelector("#tl-canvas").dataset.failed >= 2`)
	// A call of main.D that failed through main.handle, found in the
	// timeline's answer and opened as the function view's links open
	// calls: its bar is marked in red, and its details say its error.
	var href string
	p.do(chromedp.Evaluate(`(async () => {
		const lanes = await ct.api("lanes");
		const r = await ct.api("timeline", { from: 0, to: lanes.end_ns + 1, px: 20000, l0: 0, l1: lanes.g.length });
		for (const l of r.lanes) for (let j = 0; j < l.items.length; j += r.stride) {
			const it = l.items.slice(j, j + r.stride), e = r.errors && r.errors[it[7]];
			if (it[4] === 1 && ct.names[it[2]] === "main.D" && e && e.type === "*fmt.wrapError") return ct.timelineHref(lanes.g[l.lane], it[0], it[1]);
		}
		return "";
	})()`, &href, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if href == "" {
		t.Fatal("no failed call of main.D through main.handle in the timeline's answer")
	}
	p.open(url + href)
	p.wait("the failed call on the timeline", `!document.querySelector("#tl-canvas").dataset.loading && (ct.failedBars() || []).some((b) => b.fn === "main.D")`)
	clickFailedD := func() {
		t.Helper()
		var red struct {
			X, Y   float64
			Corner []int
		}
		// The pixel in the bar's red corner, and where to click.
		p.eval(`(() => { const c = document.querySelector("#tl-canvas"), r = c.getBoundingClientRect(), d = window.devicePixelRatio || 1;
			const b = ct.failedBars().find((b) => b.fn === "main.D");
			const px = c.getContext("2d").getImageData(Math.floor((b.x + b.w - 2.5 - r.left) * d), Math.floor((b.y + 1.5 - r.top) * d), 1, 1).data;
			return {X: b.x + b.w / 2, Y: b.y + b.h / 2, Corner: Array.from(px)}; })()`, &red)
		// The functions' colours are warm but light: none is this red.
		if c := red.Corner; len(c) < 3 || c[0] < 180 || c[1] > 20 || c[2] > 20 {
			t.Errorf("the failed call's corner is coloured %v, not red", c)
		}
		p.do(chromedp.MouseClickXY(red.X, red.Y))
		p.wait("the failed call's details", `!!document.querySelector("#tl-error")`)
		if s := p.text("#tl-error"); s != `err=*fmt.wrapError "setting limit: strconv.Atoi: parsing \"ten\": invalid syntax"` {
			t.Errorf("the failed call's error reads %q", s)
		}
		if s := p.text("#tl-details"); !strings.HasPrefix(s, "main.D in g") {
			t.Errorf("the failed call's details: %q", s)
		}
	}
	clickFailedD()
	// Wider, for the screenshot: the goroutines started after it, whose
	// calls did not fail, beside it.
	var at struct{ G, Mark float64 }
	p.eval(`(() => { const q = new URLSearchParams(location.hash.split("?")[1]); return {G: +q.get("g"), Mark: +q.get("mark")}; })()`, &at)
	p.open(fmt.Sprintf("%s#timeline?g=%.0f&from=%.0f&to=%.0f&mark=%.0f", url, at.G, max(at.Mark-30000, 0), at.Mark+250000, at.Mark))
	p.wait("the failed call, wider", `!document.querySelector("#tl-canvas").dataset.loading && (ct.failedBars() || []).some((b) => b.fn === "main.D")`)
	clickFailedD()
	p.shot("errors-timeline.png")

	// Call tree: goroutine 1's calls of main.D, two of them failed.
	p.open(url + "#tree?g=1&F=main%5C.D%24")
	p.wait("the calls of main.D", `document.querySelectorAll("#tree li li").length >= 4`)
	if s := p.text("#tree"); strings.Count(s, `err=*fs.PathError "open `) != 2 || !strings.Contains(s, `workers.local: no such file or directory"`) {
		t.Errorf("call tree of main.D in g1: %q", s)
	}

	// Flame graph coloured by errors: main.handle failed in 10 of its
	// 100 calls, main.serve never.
	p.open(url + "#flame?errors=1")
	// main.handle's box and the failed callee's above it: main.main's
	// failed calls of main.D are drawn only when main.main lasted long
	// enough beside the serving goroutines (in CI it did not, and its
	// boxes were under half a pixel).
	p.wait("the boxes of failed calls", `+document.querySelector("#flame-canvas").dataset.failedBoxes >= 2 && ct.flameBox("main.handle")`)
	if s := p.text("#flame-legend"); !strings.Contains(s, "share of each box's calls that returned an error") {
		t.Errorf("flame legend: %q", s)
	}
	boxColour := func(name string) []int {
		t.Helper()
		var c []int
		// Just inside the box's top left corner, where no glyph of its
		// label reaches in any font: the label starts 3 pixels in, and
		// sampling above it in the middle hit a glyph's top in CI.
		p.eval(fmt.Sprintf(`(() => { const c = document.querySelector("#flame-canvas"), r = c.getBoundingClientRect(), d = window.devicePixelRatio || 1;
			const b = ct.flameBox(%q);
			return Array.from(c.getContext("2d").getImageData(Math.floor((b.left + 1 - r.left) * d), Math.floor((b.top + 2 - r.top) * d), 1, 1).data); })()`, name), &c)
		return c
	}
	if c := boxColour("main.handle"); len(c) < 3 || c[0] < c[1]+40 {
		t.Errorf("main.handle, 10%% failed, is coloured %v, not red", c)
	}
	if c := boxColour("main.serve"); len(c) < 3 || c[0] != c[1] || c[1] != c[2] {
		t.Errorf("main.serve, never failed, is coloured %v, not grey", c)
	}
	var box struct{ X, Y float64 }
	p.eval(`ct.flameBox("main.handle")`, &box)
	p.do(chromedp.MouseEvent(input.MouseMoved, box.X, box.Y))
	p.wait("main.handle's failures", `document.querySelector("#flame-status").textContent.includes("10 of 100 calls returned an error (10.0%)")`)
	p.shot("errors-flame.png")
	// Off, the functions' own colours.
	p.do(chromedp.Click("#flame-errors", chromedp.ByQuery))
	p.wait("the flame graph without errors", `!location.hash.includes("errors=1") && +document.querySelector("#flame-canvas").dataset.failedBoxes === 0`)

	if len(p.exceptions) > 0 {
		t.Errorf("JavaScript exceptions: %q", p.exceptions)
	}
}

// TestServeBrowserValues drives the web UI over a trace of
// examples/failing recorded with --args 'main\.D$': the details of a
// clicked call of main.D on the timeline, and the status line over it,
// show its argument and result as calltrail replay does, and so do the
// call tree's rows. It writes values-timeline.png.
func TestServeBrowserValues(t *testing.T) {
	p := newPage(t)
	bin := clitest.Binary(t)
	trace := filepath.Join(t.TempDir(), "args.out")
	if out, err := exec.Command(bin, "run", "-o", trace, "--args", `main\.D$`, "../../examples/failing").CombinedOutput(); err != nil {
		t.Fatalf("calltrail run: %v\n%s", err, out)
	}
	url, _, _ := startServe(t, bin, trace)
	p.open(url + "#timeline")

	// Goroutine 1's calls of main.D, from the timeline's answer:
	// loadDefaults reads workers (4) and queue (64), loadOverrides fails
	// to open workers.local and queue.local (0 and an error).
	type call struct {
		Call          int
		Href          string
		Args, Results []string
	}
	var calls []call
	p.do(chromedp.Evaluate(`(async () => {
		const lanes = await ct.api("lanes"), k = lanes.g.indexOf(1);
		const r = await ct.api("timeline", { from: 0, to: lanes.end_ns + 1, px: 20000, l0: k, l1: k + 1 });
		const out = [];
		for (const l of r.lanes) for (let j = 0; j < l.items.length; j += r.stride) {
			const it = l.items.slice(j, j + r.stride), v = l.values && l.values[it[5]];
			if (it[4] === 1 && ct.names[it[2]] === "main.D") out.push({Call: it[5], Href: ct.timelineHref(1, it[0], it[1]), Args: v && v.args, Results: v && v.results});
		}
		return out;
	})()`, &calls, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	// A path as long as a temporary directory's is cut at 32 bytes.
	path := regexp.MustCompile(`^"/[^"]*"…?$`)
	var results []string
	for _, c := range calls {
		if len(c.Args) != 1 || !path.MatchString(c.Args[0]) || len(c.Results) != 1 {
			t.Fatalf("goroutine 1's calls of main.D: %+v", calls)
		}
		results = append(results, c.Results[0])
	}
	if strings.Join(results, " ") != "4 64 0 0" || !strings.HasSuffix(calls[0].Args[0], `/workers"`) {
		t.Fatalf("goroutine 1's calls of main.D: %+v", calls)
	}

	// Each opened and clicked as in the errors test: its details read
	// main.D("/tmp/failing…/workers") = 4 in g1: ...
	clickD := func(c call) {
		t.Helper()
		p.open(url + c.Href)
		p.wait("the call of main.D on the timeline", fmt.Sprintf(`!document.querySelector("#tl-canvas").dataset.loading && (ct.callBars() || []).some((b) => b.g === 1 && b.call === %d)`, c.Call))
		var at struct{ X, Y float64 }
		p.eval(fmt.Sprintf(`(() => { const b = ct.callBars().find((b) => b.g === 1 && b.call === %d); return {X: b.x + b.w / 2, Y: b.y + b.h / 2}; })()`, c.Call), &at)
		p.do(chromedp.MouseEvent(input.MouseMoved, at.X, at.Y), chromedp.MouseClickXY(at.X, at.Y))
		p.wait("the call's details", `document.querySelector("#tl-details").textContent.includes(" in g1: ")`)
		sig := "main.D(" + c.Args[0] + ") = " + c.Results[0]
		if s := p.text("#tl-details"); !strings.HasPrefix(s, sig+" in g1: ") {
			t.Errorf("the details of call %d read %q, want %s in g1: ...", c.Call, s, sig)
		}
		if s := p.text("#tl-status"); !strings.HasPrefix(s, sig+": ") {
			t.Errorf("the status over call %d reads %q, want %s: ...", c.Call, s, sig)
		}
	}
	clickD(calls[0])
	clickD(calls[2])
	if s := p.text("#tl-error"); !strings.HasPrefix(s, `err=*fs.PathError "open /`) {
		t.Errorf("the failed call's error reads %q", s)
	}
	p.shot("values-timeline.png")

	// Call tree: the same calls, in the same words.
	p.open(url + "#tree?g=1&F=main%5C.D%24")
	p.wait("the calls of main.D", `document.querySelectorAll("#tree li li").length >= 4`)
	var rows []string
	p.eval(`Array.from(document.querySelectorAll("#tree li li .call"), (e) => e.textContent)`, &rows)
	var want []string
	for _, c := range calls {
		want = append(want, "main.D("+c.Args[0]+") = "+c.Results[0])
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("call tree of main.D in g1: %q, want %q", rows, want)
	}

	if len(p.exceptions) > 0 {
		t.Errorf("JavaScript exceptions: %q", p.exceptions)
	}
}

// TestServeBrowserSpeed measures, in Chromium, calltrail serve on the
// trace CALLTRAIL_BENCH_TRACE (a ten-million-call one, say): time to
// ready, the first page's drawing, the timeline's redraws on pan and
// zoom, and the server's memory. It logs the figures and asserts
// nothing on them: a busy machine must not fail it.
//
//	CALLTRAIL_BENCH_TRACE=/tmp/fib33.out go test -run TestServeBrowserSpeed -v ./cmd/calltrail
func TestServeBrowserSpeed(t *testing.T) {
	trace := os.Getenv("CALLTRAIL_BENCH_TRACE")
	if trace == "" {
		t.Skip("set CALLTRAIL_BENCH_TRACE to a trace to measure")
	}
	p := newPage(t)
	url, ready, pid := startServe(t, clitest.Binary(t), trace)
	t.Logf("ready to view %v after start", ready.Round(time.Millisecond))
	p.open(url + "#overview")
	var nav struct{ ResponseStart, DomContentLoadedEventEnd, LoadEventEnd float64 }
	p.eval(`performance.getEntriesByType("navigation")[0].toJSON()`, &nav)
	t.Logf("first page (overview) drawn %.0fms after navigation began (HTML at %.0fms, DOMContentLoaded %.0fms)",
		p.number(`ct.firstDraw`), nav.ResponseStart, nav.DomContentLoadedEventEnd)
	p.open(url + "#flame")
	p.shot("speed-flame.png")
	p.open(url + "#timeline")
	p.wait("bars", `+document.querySelector("#tl-canvas").dataset.bars > 0`)
	p.shot("speed-timeline.png")
	var at struct{ X, Y float64 }
	p.eval(`(() => { const r = document.querySelector("#tl-canvas").getBoundingClientRect(); return {X: r.left + r.width / 2, Y: r.top + 100}; })()`, &at)
	p.eval(`ct.perf = {}`, nil)
	for i := range 12 {
		p.wheel(at.X, at.Y, -300)
		if i%3 == 2 {
			p.drag(at.X, at.Y, at.X-200, at.Y)
		}
	}
	p.wheel(at.X, at.Y, 200)
	p.wait("the last fetch", `!document.querySelector("#tl-canvas").dataset.loading`)
	var perf map[string][]float64
	p.eval(`ct.perf`, &perf)
	for _, k := range []string{"timelineDraw", "timelineFetch", "timelineUpdate"} {
		v := perf[k]
		sort.Float64s(v)
		if len(v) > 0 {
			t.Logf("%s: %d times, median %.1fms, max %.1fms", k, len(v), v[len(v)/2], v[len(v)-1])
		}
	}
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmRSS") || strings.HasPrefix(l, "VmHWM") {
			t.Logf("server %s", strings.Join(strings.Fields(l), " "))
		}
	}
	logTimings(p)
	if len(p.exceptions) > 0 {
		t.Errorf("JavaScript exceptions: %q", p.exceptions)
	}
}

// logTimings logs the page's own timings: each view's drawing, the
// timeline's redraws and fetches, the first draw.
func logTimings(p *page) {
	var perf map[string]any
	p.eval(`({perf: ct.perf, firstDrawMs: ct.firstDraw})`, &perf)
	b, _ := json.Marshal(perf)
	p.t.Logf("browser timings (ms): %s", b)
}

// TestServeBrowserDeep opens the flame graph and the function view of a
// recursion 20,000 calls deep: the page walks its trees without
// recursion of its own, and draws at most as many rows as a canvas
// holds.
func TestServeBrowserDeep(t *testing.T) {
	p := newPage(t)
	bin := clitest.Binary(t)
	trace := filepath.Join(t.TempDir(), "deep.out")
	var buf bytes.Buffer
	e, err := tracewrite.NewEncoder(&buf, map[string]string{"program": "deep", "goid": "g"})
	if err != nil {
		t.Fatal(err)
	}
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.main", File: "main.go", Line: 1}, {Name: "main.down", File: "main.go", Line: 5}})
	var b tracewrite.Batch
	const depth = 20000
	b.Enter(1, 1, 0)
	for i := range depth {
		b.Enter(1, 2, int64(1+i))
	}
	for i := range depth + 1 {
		b.Exit(1, tracefile.Return, int64(depth+10+i))
	}
	e.Clock(3*depth, 3*depth)
	e.Events(&b)
	e.End("main returned", time.Unix(0, 0))
	e.Flush()
	if err := os.WriteFile(trace, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	url, _, _ := startServe(t, bin, trace)
	p.open(url + "#flame")
	p.wait("the deep flame graph", `+document.querySelector("#flame-canvas").dataset.boxes >= 1000`)
	// The recursion is one chain, folded, with its depth.
	p.open(url + "#func?name=main.down")
	if n := p.number(`document.querySelectorAll("#fn-chains .chain").length`); n != 1 {
		t.Errorf("function view of main.down lists %v chains, want the recursion folded into one", n)
	}
	if s := p.text("#fn-chains .path"); !strings.Contains(s, "main.down ×"+strconv.Itoa(depth)) && !strings.Contains(s, "main.down ×20,000") {
		t.Errorf("the chain reads %q, want main.down ×%d", s, depth)
	}
	if len(p.exceptions) > 0 {
		t.Errorf("JavaScript exceptions: %q", p.exceptions)
	}
}

// TestFlamePageBrowser opens the page calltrail flame writes, from a file
// with no server behind it: it draws with the web UI's code, switches to
// the inverted graph, and colours functions as the SVG does.
func TestFlamePageBrowser(t *testing.T) {
	p := newPage(t)
	bin := clitest.Binary(t)
	dir := t.TempDir()
	trace, page := filepath.Join(dir, "trace.out"), filepath.Join(dir, "flame.html")
	if out, err := exec.Command(bin, "run", "-o", trace, "../../examples/callchains").CombinedOutput(); err != nil {
		t.Fatalf("calltrail run: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "flame", "-o", page, trace).CombinedOutput(); err != nil {
		t.Fatalf("calltrail flame: %v\n%s", err, out)
	}
	p.do(chromedp.Navigate("file://" + page))
	p.wait("the page's flame graph", `!!document.querySelector("#view-flame[data-ready]") && +document.querySelector("#flame-canvas").dataset.boxes >= 5`)
	p.do(chromedp.Click(`input[name="mode"][value="self"]`, chromedp.ByQuery))
	p.wait("the inverted graph", `location.hash.includes("mode=self") && +document.querySelector("#flame-canvas").dataset.boxes >= 5`)
	var colours []string
	names := []string{"main.D", "main.main.func1", "runtime.gopark"}
	p.eval(`["main.D", "main.main.func1", "runtime.gopark"].map(ct.colour)`, &colours)
	for i, n := range names {
		if i < len(colours) && colours[i] != flame.Colour(n) {
			t.Errorf("%s: the page colours it %s, the SVG %s", n, colours[i], flame.Colour(n))
		}
	}
	// value, base, all: slower, faster, the same, small against all.
	changes := [][3]int64{{150, 100, 1000}, {100, 400, 1000}, {1000, 1001, 5000}, {30, 20, 100000}, {7, 0, 10}}
	var diffColours []string
	js, _ := json.Marshal(changes)
	p.eval(string(js)+`.map(([v, b, a]) => ct.diffColour(v, b, a))`, &diffColours)
	for i, c := range changes {
		if want := flame.DiffColour(c[0], c[1], c[2]); i >= len(diffColours) || diffColours[i] != want {
			t.Errorf("change %v: the page colours it %v, the SVG %s", c, diffColours, want)
		}
	}
	if len(p.exceptions) > 0 {
		t.Errorf("JavaScript exceptions: %q", p.exceptions)
	}
}
