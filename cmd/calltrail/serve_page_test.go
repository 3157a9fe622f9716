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

// page is a tab of headless Chromium, with the steps the browser tests
// take; each fails the test when it fails.
type page struct {
	t          *testing.T
	ctx        context.Context
	shots      string   // where screenshots go
	exceptions []string // JavaScript exceptions thrown
	doc        string   // the URL of the document open, without its fragment
}

// newPage starts Chromium, or skips the test when it is missing and not
// required (CALLTRAIL_BROWSER=required, as scripts/test.sh sets).
func newPage(t *testing.T) *page {
	path := ""
	for _, name := range []string{os.Getenv("CALLTRAIL_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); name != "" && err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CALLTRAIL_BROWSER") == "required" {
			t.Fatal("chromium not found, and CALLTRAIL_BROWSER=required")
		}
		t.Skip("chromium not found; install it (apt-get install chromium) to run the browser tests")
	}
	// Not t.TempDir: Chromium's helper processes may still be writing to
	// it for a moment after the browser is gone, and that must not fail
	// the test.
	profile, err := os.MkdirTemp("", "calltrail-chromium")
	if err != nil {
		t.Fatal(err)
	}
	// Chromium keeps its singleton socket in a directory of its own
	// under TMPDIR, and removes it only when it exits of itself: here it
	// is killed. Under the profile, it goes with it.
	tmp := filepath.Join(profile, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.Env("TMPDIR=" + tmp),
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
	t.Cleanup(func() {
		cancelT()
		cancel()
		cancelA()
		for range 20 {
			if os.RemoveAll(profile) == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	p := &page{t: t, ctx: ctx, shots: artifactsDir(t)}
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			p.exceptions = append(p.exceptions, e.ExceptionDetails.Error())
		}
	})
	p.do(chromedp.EmulateViewport(1280, 800))
	return p
}

func (p *page) do(actions ...chromedp.Action) {
	p.t.Helper()
	if err := chromedp.Run(p.ctx, actions...); err != nil {
		p.t.Fatal(err)
	}
}

func (p *page) eval(js string, v any) {
	p.t.Helper()
	p.do(chromedp.Evaluate(js, v))
}

// text is the text of the element sel selects.
func (p *page) text(sel string) string {
	p.t.Helper()
	var s string
	p.eval(fmt.Sprintf(`document.querySelector(%q).textContent`, sel), &s)
	return s
}

func (p *page) number(js string) float64 {
	p.t.Helper()
	var v float64
	p.eval(js, &v)
	return v
}

// open goes to a view and waits until it has drawn.
func (p *page) open(url string) {
	p.t.Helper()
	view, _, _ := strings.Cut(url[strings.Index(url, "#")+1:], "?")
	doc, frag, _ := strings.Cut(url, "#")
	if doc == p.doc {
		// Within the open document: no load event comes, which
		// chromedp's Navigate can wait for until its deadline.
		js, _ := json.Marshal("#" + frag)
		p.do(chromedp.Evaluate("location.hash = "+string(js), nil))
	} else {
		p.do(chromedp.Navigate(url))
		p.doc = doc
	}
	// A poll in the page rather than chromedp's WaitVisible, which
	// follows nodes through DOM events and, on a loaded machine, has
	// missed a view that was there.
	p.wait("the "+view+" view", `!!document.querySelector("#view-`+view+`[data-ready]")`)
}

// wait polls a JavaScript condition; on timeout it saves a screenshot,
// failure.png, and fails the test.
func (p *page) wait(what, js string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.Poll(js, nil, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		p.shot("failure.png")
		var state string
		chromedp.Run(p.ctx, chromedp.Evaluate(`location.hash + " " + JSON.stringify(ct.perf)`, &state))
		p.t.Fatalf("waiting for %s: %v (page at %s)", what, err, state)
	}
}

func (p *page) shot(name string) {
	p.t.Helper()
	var png []byte
	p.do(chromedp.CaptureScreenshot(&png))
	path := filepath.Join(p.shots, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("screenshot %s", path)
}

// wheel turns the mouse wheel over a point: up (negative) zooms in.
func (p *page) wheel(x, y, dy float64) {
	p.t.Helper()
	p.do(chromedp.ActionFunc(func(ctx context.Context) error {
		return input.DispatchMouseEvent(input.MouseWheel, x, y).WithDeltaX(0).WithDeltaY(dy).Do(ctx)
	}))
}

// drag presses the mouse at one point and lets go at another.
func (p *page) drag(x0, y0, x1, y1 float64) {
	p.t.Helper()
	p.do(chromedp.MouseEvent(input.MousePressed, x0, y0, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.MouseMoved, (x0+x1)/2, (y0+y1)/2, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.MouseMoved, x1, y1, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.MouseReleased, x1, y1, chromedp.ButtonLeft))
}

// startServe starts calltrail serve on the traces and returns its URL,
// and how long it took to be ready, and its process id.
func startServe(t *testing.T, bin string, traces ...string) (string, time.Duration, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "-http", "127.0.0.1:0"}, traces...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	began := time.Now()
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
	ready := time.Since(began)
	t.Logf("%s", strings.TrimSpace(line))
	for _, f := range strings.Fields(line) {
		if strings.HasPrefix(f, "http://127.0.0.1:") {
			return f, ready, cmd.Process.Pid
		}
	}
	t.Fatalf("calltrail serve printed no URL: %q", line)
	return "", 0, 0
}

// artifactsDir is where screenshots go: CALLTRAIL_ARTIFACTS, relative to
// the repository's root, or artifacts/ there.
// repoRoot is the repository's root, found when the tests start: tests
// that change the working directory for a while must not move where
// screenshots go.
var repoRoot, _ = filepath.Abs(filepath.Join("..", ".."))

func artifactsDir(t *testing.T) string {
	dir := os.Getenv("CALLTRAIL_ARTIFACTS")
	if dir == "" {
		dir = "artifacts"
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(repoRoot, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
