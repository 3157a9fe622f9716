package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/internal/clitest"
	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/web"
)

// FuzzViews drives whole traces through every view: the reader, the
// analysis, each verb of the command line and each call of the web UI's
// API. The traces come from tracetest.Generate: well-formed chunks with
// valid checksums and extreme contents. Every view must answer, or refuse
// with an error on one line, without a panic, and within memory
// proportional to the trace.
func FuzzViews(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		[]byte("\x01\x00\x00\x00\x04\x00\x01\x01\x00\x00\x04\x05\x00\x04\x05\x00"),
		[]byte("\x00\x00\x00\x03\x00\x00\x00\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b"),
		[]byte("\x03\x00\x01\x00\x00\x00\x02\x01\x00\x00\x0a\x02\x01\x1f\x00"),         // a profile bomb
		[]byte("\x00\x00\x00\x01\x00\x00\x00\x00\x07\x00\x10\x01\x00\x00\x0b\x00\x00"), // goroutine records, extreme times
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
		checkViews(t, path, len(trace))
	})
}

// viewLimit is the most memory a view of a trace of n bytes may allocate:
// in proportion to the trace, with room for the fixed costs (the web UI's
// assets, flame graph pages, buffers).
// Under the race detector, which allocates pooled buffers anew, the
// bound is four times as wide.
func viewLimit(n int) uint64 {
	limit := 64<<20 + 200*uint64(n)
	if clitest.Race {
		limit *= 4
	}
	return limit
}

// checkViews runs every view over the trace at path, of n bytes.
func checkViews(t *testing.T, path string, n int) {
	t.Helper()
	out := filepath.Join(filepath.Dir(path), "view.out")
	for _, args := range [][]string{
		{"info", path},
		{"replay", path},
		{"replay", "-parents", "-D", "3", "-t", "1ns", path},
		{"report", "--json", path},
		{"report", "-F", "main", "-window", "1ns-1s", path},
		{"chains", "--json", "main.main", path},
		{"chains", ".", path},
		{"goroutines", "--json", path},
		{"goroutines", path},
		{"diff", "--json", path, path},
		{"flame", "-o", out + ".svg", path},
		{"flame", "--self", "--wait", "-o", out + ".html", path},
		{"export", "--format", "pprof", "-o", out, path},
		{"export", "--format", "folded", "-o", out, path},
		{"export", "--format", "chrome", "-o", out, path},
		{"export", "--format", "speedscope", "-o", out, path},
		{"spans", path},
		{"spans", "--json", "--span", ".", path},
		{"report", "--span", ".", path},
		{"replay", "--trace-id", "01000000000000000000000000000000", path},
		{"export", "--format", "otlp", "--spans", ".", "-o", out, path},
	} {
		var code int
		var stderr string
		used := allocated(func() { code, _, stderr = runCmd(args...) })
		if code != 0 && code != 1 {
			t.Errorf("%s: exit %d: %s", strings.Join(args[:len(args)-1], " "), code, stderr)
		}
		// Warnings, then at most one error: each a line of its own.
		for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
			if strings.HasPrefix(line, "calltrail: internal error") {
				t.Errorf("%s: %s", args[0], line)
			}
			if line != "" && !strings.HasPrefix(line, "calltrail: ") {
				t.Errorf("%s: stderr %q: a line not calltrail's", args[0], stderr)
				break
			}
		}
		if used > viewLimit(n) {
			t.Errorf("%s: %d MB allocated for a trace of %d bytes", strings.Join(args[:len(args)-1], " "), used>>20, n)
		}
	}
	var tr *web.Trace
	var err error
	if used := allocated(func() { tr, err = web.Load(path) }); used > viewLimit(n) {
		t.Errorf("serve: %d MB allocated to load a trace of %d bytes", used>>20, n)
	}
	if err != nil {
		return
	}
	h := web.New(tr, tr, nil).Handler()
	get := func(target string) []byte {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Host = "localhost"
		if used := allocated(func() { h.ServeHTTP(rec, req) }); used > viewLimit(n) {
			t.Errorf("%s: %d MB allocated for a trace of %d bytes", target, used>>20, n)
		}
		if rec.Code >= 500 {
			t.Errorf("%s: %d %s", target, rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	get("/api/overview")
	get("/api/flame")
	get("/api/flame?mode=self&weight=cpu")
	get("/api/flame?weight=wait")
	var names []string
	json.Unmarshal(get("/api/names"), &names)
	for i, name := range names {
		if i == 5 {
			break
		}
		get("/api/func?name=" + url.QueryEscape(name))
	}
	var lanes struct {
		Lanes []struct {
			G uint64 `json:"g"`
		} `json:"lanes"`
	}
	json.Unmarshal(get("/api/lanes"), &lanes)
	get("/api/timeline?px=2000")
	get("/api/timeline?from=1&to=4611686018427387904&px=10")
	get("/api/tree")
	get("/api/tree?F=main&D=2&t=1ns")
	for i, l := range lanes.Lanes {
		if i == 3 {
			break
		}
		get(fmt.Sprintf("/api/lane?g=%d", l.G))
		get(fmt.Sprintf("/api/tree?in=%d", l.G))
		get(fmt.Sprintf("/api/tree?in=%d&call=0&window=1ns-", l.G))
	}
}

// allocated runs fn and returns the bytes it allocated.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
