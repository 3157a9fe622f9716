package web

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/replay"
	"github.com/calltrail/calltrail/tracefile"
)

// TestTreeAgreesWithReplay expands the web UI's call tree fully, under
// random filters on random traces, and checks that it shows the calls
// calltrail replay prints, in the same order: one filter, on an index and
// on a stream. Half the trials read the tree in pages of two rows.
func TestTreeAgreesWithReplay(t *testing.T) {
	defer func(n int) { treeLimit = n }(treeLimit)
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 80 {
		treeLimit = []int{2, 500}[trial%2]
		script, end := randomScript(rng)
		data, err := tracetest.Build(script)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "trace.out")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		s := New(tr, nil, nil)
		for range 10 {
			q := url.Values{}
			f := &filter.Filter{}
			if rng.IntN(3) == 0 {
				q.Set("F", "main.b")
				f.Focus = regexp.MustCompile("main.b")
			}
			if rng.IntN(3) == 0 {
				q.Set("N", "main.c")
				f.Hide = regexp.MustCompile("main.c")
			}
			if d := rng.IntN(4); d > 0 {
				q.Set("D", fmt.Sprint(d))
				f.MaxDepth = d
			}
			if rng.IntN(3) == 0 {
				f.MinTime = time.Duration(rng.Int64N(200))
				q.Set("t", f.MinTime.String())
			}
			if rng.IntN(3) == 0 {
				f.From = time.Duration(rng.Int64N(end))
				f.To = f.From + time.Duration(1+rng.Int64N(end))
				q.Set("window", fmt.Sprintf("%dns-%dns", f.From, f.To))
			}
			var want bytes.Buffer
			r, err := tracefile.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if err := replay.Write(&want, r, f, replay.Options{}); err != nil {
				t.Fatal(err)
			}
			got := treeCalls(t, s, q)
			if w := replayCalls(want.String()); got != w {
				t.Fatalf("trial %d, filters %s: the tree shows\n%s\nreplay prints\n%s\nscript:\n%s", trial, q.Encode(), got, w, script)
			}
		}
	}
}

// randomScript writes a tracetest script of three goroutines, each a
// random tree of calls of main.a to main.e, and returns it with its end.
func randomScript(rng *rand.Rand) (string, int64) {
	var b strings.Builder
	at := int64(0)
	var call func(g, depth int)
	call = func(g, depth int) {
		at += 1 + rng.Int64N(20)
		fmt.Fprintf(&b, "%d +main.%c %d\n", g, 'a'+rng.IntN(5), at)
		for n := rng.IntN(4); depth < 6 && n > 0; n-- {
			call(g, depth+1)
		}
		at += 1 + rng.Int64N(20)
		fmt.Fprintf(&b, "%d - %d\n", g, at)
	}
	for g := 1; g <= 3; g++ {
		for range 1 + rng.IntN(3) {
			call(g, 1)
		}
	}
	return b.String(), at
}

// treeCalls expands every goroutine of the tree view and lists the
// calls shown, a line each: goroutine and function.
func treeCalls(t *testing.T, s *Server, q url.Values) string {
	t.Helper()
	var out strings.Builder
	get := func(extra url.Values) treeJSON {
		p := url.Values{}
		for k, v := range q {
			p[k] = v
		}
		for k, v := range extra {
			p[k] = v
		}
		v, err := s.tree(nil, nil, &params{q: p})
		if err != nil {
			t.Fatalf("tree %s: %v", p.Encode(), err)
		}
		return v.(treeJSON)
	}
	var expand func(g uint64, call int)
	expand = func(g uint64, call int) {
		for after := 0; after >= 0; {
			v := get(url.Values{"in": {fmt.Sprint(g)}, "call": {fmt.Sprint(call)}, "after": {fmt.Sprint(after)}})
			for _, r := range v.Rows {
				fmt.Fprintf(&out, "g%d %s\n", g, s.t.Profile.Name(r.Func))
				if r.Kids {
					expand(g, r.Call)
				}
			}
			after = v.More
		}
	}
	for after := 0; after >= 0; {
		v := get(url.Values{"after": {fmt.Sprint(after)}})
		for _, g := range v.Goroutines {
			expand(g.G, -1)
		}
		after = v.More
	}
	return out.String()
}

// replayCalls lists the calls replay printed, as treeCalls does.
func replayCalls(text string) string {
	var out strings.Builder
	for _, line := range strings.Split(text, "\n") {
		g, rest, _ := strings.Cut(line, ":")
		if _, name, ok := strings.Cut(rest, "->"); ok {
			fmt.Fprintf(&out, "g%s %s\n", strings.TrimLeft(strings.Trim(g, "g[]"), "0"), name)
		}
	}
	return out.String()
}
