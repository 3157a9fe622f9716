//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestServeBrowser drives a real headless Chromium through every view of
// calltrail serve, on a trace of examples/callchains recorded for the
// test, and writes a screenshot of each view to CALLTRAIL_ARTIFACTS
// (default artifacts/ at the repository's root). Without chromium it
// skips, unless CALLTRAIL_BROWSER=required, as scripts/test.sh sets.
//
// To regenerate the README's screenshots:
//
//	CALLTRAIL_ARTIFACTS=docs/img go test -run TestServeBrowser ./cmd/calltrail
func TestServeBrowser(t *testing.T) {
	chromium := browserPath(t)
	bin := calltrailBinary(t)
	dir := t.TempDir()
	trace, base := filepath.Join(dir, "trace.out"), filepath.Join(dir, "base.out")
	for _, out := range []string{base, trace} {
		if out, err := exec.Command(bin, "run", "-o", out, "../../examples/callchains").CombinedOutput(); err != nil {
			t.Fatalf("calltrail run: %v\n%s", err, out)
		}
	}
	url := startServe(t, bin, trace, base)
	shots := artifactsDir(t)

	ctx := newBrowser(t, chromium)
	var exceptions []string
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			exceptions = append(exceptions, e.ExceptionDetails.Error())
		}
	})
	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var png []byte
			if err := chromedp.CaptureScreenshot(&png).Do(ctx); err != nil {
				return err
			}
			t.Logf("screenshot %s", filepath.Join(shots, name))
			return os.WriteFile(filepath.Join(shots, name), png, 0o644)
		})
	}
	text := func(sel string) string {
		var s string
		do(t, ctx, chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).textContent`, sel), &s))
		return s
	}
	eval := func(js string, v any) { do(t, ctx, chromedp.Evaluate(js, v)) }
	ready := func(view string) chromedp.Action {
		return chromedp.WaitVisible("#view-"+view+"[data-ready]", chromedp.ByQuery)
	}
	// wait polls a JavaScript condition, failing the test on timeout.
	wait := func(what, js string) {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		if err := chromedp.Run(tctx, chromedp.Poll(js, nil, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
			chromedp.Run(ctx, shot("failure.png"))
			var state string
			chromedp.Run(ctx, chromedp.Evaluate(`location.hash + " " + JSON.stringify(ct.perf)`, &state))
			t.Fatalf("waiting for %s: %v (page at %s)", what, err, state)
		}
	}

	// Overview.
	do(t, ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(url+"#overview"), ready("overview"))
	if s := text("#ov-cards"); !strings.Contains(s, "goroutines") || !strings.Contains(s, "calls") {
		t.Errorf("overview cards: %q", s)
	}
	if s := text("#ov-total"); !strings.Contains(s, "main.D") || !strings.Contains(s, "main.main") {
		t.Errorf("top functions by total time lack main.D or main.main: %q", s)
	}
	do(t, ctx, shot("overview.png"))

	// Flame graph: search, then click a box and see its chains.
	do(t, ctx, chromedp.Navigate(url+"#flame"), ready("flame"))
	var boxes int
	eval(`+document.querySelector("#flame-canvas").dataset.boxes`, &boxes)
	if boxes < 5 {
		t.Errorf("flame graph drew %d boxes", boxes)
	}
	do(t, ctx, chromedp.SendKeys("#flame-search", "main.D", chromedp.ByQuery))
	wait("the search's share", `document.querySelector("#flame-match").textContent.includes("matched")`)
	if s := text("#flame-match"); !strings.Contains(s, "%") {
		t.Errorf("search share: %q", s)
	}
	do(t, ctx, shot("flame.png"))
	var at struct{ X, Y float64 }
	eval(`ct.flameBox("main.C1")`, &at)
	if at.X == 0 {
		t.Fatal("no box for main.C1 in the flame graph")
	}
	do(t, ctx, chromedp.MouseClickXY(at.X, at.Y))
	wait("the chains of the clicked box", `!!document.querySelector("#flame-chains")`)
	if s := text("#flame-chains"); !strings.Contains(s, "main.main → main.A1 → main.B1 → main.C1") {
		t.Errorf("chains of main.C1: %q", s)
	}
	if !strings.Contains(locationHash(t, ctx), "zoom=") {
		t.Errorf("zoom is not in the URL: %s", locationHash(t, ctx))
	}
	do(t, ctx, shot("flame-zoomed.png"))

	// Function view: every chain, the histogram, a call opened in the timeline.
	do(t, ctx, chromedp.Navigate(url+"#func?name=main.D"), ready("func"))
	var chains int
	eval(`document.querySelectorAll("#fn-chains .chain").length`, &chains)
	if chains != 3 {
		t.Errorf("function view of main.D lists %d chains, want 3 (through A1, A2, A3)", chains)
	}
	if s := text("#fn-callers"); !strings.Contains(s, "main.C1") || !strings.Contains(s, "main.C3") {
		t.Errorf("callers of main.D: %q", s)
	}
	do(t, ctx, chromedp.Click("#fn-hist .bar:not(.empty)", chromedp.ByQuery))
	wait("the calls of a histogram bar", `document.querySelectorAll("#fn-bucket a.call").length > 0`)
	do(t, ctx, shot("function.png"))

	// Timeline: open that call, then zoom with the mouse wheel where
	// main.main runs (to the end of the trace).
	do(t, ctx, chromedp.Click("#fn-bucket a.call", chromedp.ByQuery), ready("timeline"))
	wait("bars on the timeline", `+document.querySelector("#tl-canvas").dataset.bars > 0`)
	var span0, span1 float64
	eval(`+document.querySelector("#tl-canvas").dataset.span`, &span0)
	do(t, ctx, chromedp.Click("#tl-reset", chromedp.ByQuery))
	wait("the whole trace", fmt.Sprintf(`+document.querySelector("#tl-canvas").dataset.span > %f`, span0))
	eval(`(() => { const r = document.querySelector("#tl-canvas").getBoundingClientRect(); return {X: r.left + r.width * 0.8, Y: r.top + 30}; })()`, &at)
	eval(`+document.querySelector("#tl-canvas").dataset.span`, &span0)
	for range 3 {
		do(t, ctx, chromedp.ActionFunc(func(ctx context.Context) error {
			return input.DispatchMouseEvent(input.MouseWheel, at.X, at.Y).WithDeltaX(0).WithDeltaY(-400).Do(ctx)
		}))
	}
	wait("the zoomed timeline", fmt.Sprintf(`+document.querySelector("#tl-canvas").dataset.span < %f`, span0/2))
	eval(`+document.querySelector("#tl-canvas").dataset.span`, &span1)
	t.Logf("timeline zoomed from %.0fns to %.0fns shown", span0, span1)
	wait("bars after zooming", `+document.querySelector("#tl-canvas").dataset.bars > 0`)
	do(t, ctx, chromedp.Click("#tl-reset", chromedp.ByQuery))
	wait("the whole trace again", fmt.Sprintf(`+document.querySelector("#tl-canvas").dataset.span > %f`, span1))
	do(t, ctx, shot("timeline.png"))

	// Call tree, with a focus filter, expanded.
	do(t, ctx, chromedp.Navigate(url+"#tree?F=main%5C.A1"), ready("tree"))
	do(t, ctx, chromedp.Click("#tree li .toggle", chromedp.ByQuery))
	wait("the focused calls", `document.querySelector("#tree").textContent.includes("main.A1")`)
	if s := text("#tree"); strings.Contains(s, "main.A2") {
		t.Errorf("the focus on main.A1 shows main.A2: %q", s)
	}
	eval(`(() => { for (const t of document.querySelectorAll("#tree li li .toggle")) if (t.textContent === "▸") { t.click(); } return 1; })()`, nil)
	wait("main.B1 under main.A1", `document.querySelector("#tree").textContent.includes("main.B1")`)
	do(t, ctx, shot("tree.png"))

	// A malformed filter is an error on the page, not a crash.
	do(t, ctx, chromedp.Navigate(url+"#tree?F=%28"), ready("tree"))
	wait("the filter's error", `document.querySelector("#tree-error").textContent.includes("parameter F")`)

	var perf map[string]any
	eval(`({perf: ct.perf, firstDrawMs: ct.firstDraw, navigation: performance.getEntriesByType("navigation")[0].toJSON()})`, &perf)
	b, _ := json.Marshal(perf)
	t.Logf("browser timings (ms): %s", b)
	if len(exceptions) > 0 {
		t.Errorf("JavaScript exceptions: %q", exceptions)
	}
}

// browserPath finds Chromium, or skips the test when it is missing and
// not required.
func browserPath(t *testing.T) string {
	for _, name := range []string{os.Getenv("CALLTRAIL_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CALLTRAIL_BROWSER") == "required" {
		t.Fatal("chromium not found, and CALLTRAIL_BROWSER=required")
	}
	t.Skip("chromium not found; install it (apt-get install chromium) to run the browser tests")
	return ""
}

// startServe starts calltrail serve on the traces and returns its URL.
func startServe(t *testing.T, bin string, traces ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "-http", "127.0.0.1:0"}, traces...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("calltrail serve printed no URL: %v", err)
	}
	t.Logf("%s", strings.TrimSpace(line))
	for _, f := range strings.Fields(line) {
		if strings.HasPrefix(f, "http://127.0.0.1:") {
			return f
		}
	}
	t.Fatalf("calltrail serve printed no URL: %q", line)
	return ""
}

// artifactsDir is where screenshots go: CALLTRAIL_ARTIFACTS, relative to
// the repository's root, or artifacts/ there.
func artifactsDir(t *testing.T) string {
	dir := os.Getenv("CALLTRAIL_ARTIFACTS")
	if dir == "" {
		dir = "artifacts"
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join("..", "..", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func newBrowser(t *testing.T, path string) context.Context {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	// This chromedp's protocol types predate some of Chromium's events:
	// say so once, not for every event.
	var once sync.Once
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if strings.Contains(msg, "could not unmarshal event") {
			once.Do(func() { t.Logf("chromedp: %s (and maybe more such)", msg) })
			return
		}
		t.Logf("chromedp: %s", msg)
	}))
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelT(); cancel(); cancelA() })
	return ctx
}

func do(t *testing.T, ctx context.Context, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

func locationHash(t *testing.T, ctx context.Context) string {
	var h string
	do(t, ctx, chromedp.Evaluate(`location.hash`, &h))
	return h
}
