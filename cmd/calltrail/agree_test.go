//go:build unix

package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/diagnose"
	"github.com/calltrail/calltrail/internal/clitest"
	"github.com/calltrail/calltrail/query"
)

// TestCommandLineAgreesWithWeb records a real program, asks the command
// line and a running calltrail serve the same questions, and checks that
// they answer with the same figures: per function, chains, goroutines,
// findings and the flame graph's totals.
func TestCommandLineAgreesWithWeb(t *testing.T) {
	for _, example := range []string{"rpc", "callchains"} {
		t.Run(example, func(t *testing.T) { agree(t, example) })
	}
}

func agree(t *testing.T, example string) {
	bin := clitest.Binary(t)
	trace := filepath.Join(t.TempDir(), example+".out")
	if out, err := exec.Command(bin, "run", "-o", trace, "../../examples/"+example).CombinedOutput(); err != nil {
		t.Fatalf("calltrail run: %v\n%s", err, out)
	}
	cli := func(v any, args ...string) {
		t.Helper()
		out, err := exec.Command(bin, append(args, trace)...).Output()
		if err != nil {
			t.Fatalf("calltrail %s: %v", strings.Join(args, " "), err)
		}
		if err := json.Unmarshal(out, v); err != nil {
			t.Fatalf("calltrail %s: %v", strings.Join(args, " "), err)
		}
	}
	base, _, _ := startServe(t, bin, trace)
	web := func(v any, path string, q url.Values) {
		t.Helper()
		resp, err := http.Get(base + "api/" + path + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/api/%s?%s: %s", path, q.Encode(), resp.Status)
		}
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("/api/%s: %v", path, err)
		}
	}

	var report struct {
		Findings  []diagnose.Finding `json:"findings"`
		Functions []query.Function   `json:"functions"`
	}
	cli(&report, "report", "--json")
	var overview query.Overview
	web(&overview, "overview", nil)
	if len(report.Functions) < 5 {
		t.Fatalf("%d functions in the trace of %s", len(report.Functions), example)
	}
	if !reflect.DeepEqual(report.Findings, overview.Findings) {
		t.Errorf("findings:\ncommand line %+v\nweb          %+v", report.Findings, overview.Findings)
	}
	if n := len(overview.TopSelf); n == 0 || !reflect.DeepEqual(report.Functions[:n], overview.TopSelf) {
		t.Errorf("the overview's busiest functions differ from report's first %d", n)
	}

	// Every function, and the chains of the one with the most.
	most, mostChains := "", 0
	for _, f := range report.Functions {
		var view query.FunctionView
		web(&view, "func", url.Values{"name": {f.Name}})
		if !reflect.DeepEqual(view.Function, f) {
			t.Errorf("%s:\ncommand line %+v\nweb          %+v", f.Name, f, view.Function)
		}
		if n := len(view.Chains) + view.MoreChains; n > mostChains {
			most, mostChains = f.Name, n
		}
	}
	var chains struct {
		Chains []query.Chain `json:"chains"`
	}
	cli(&chains, "chains", "--json", most)
	var view query.FunctionView
	web(&view, "func", url.Values{"name": {most}})
	t.Logf("%d functions, %d findings, %d chains of %s compared", len(report.Functions), len(report.Findings), len(chains.Chains), most)
	if len(chains.Chains) == 0 || len(chains.Chains) != len(view.Chains)+view.MoreChains {
		t.Fatalf("%s: %d chains on the command line, %d (+%d) on the web", most, len(chains.Chains), len(view.Chains), view.MoreChains)
	}
	for i, c := range view.Chains {
		cc := chains.Chains[i]
		cc.Slowest, c.Slowest = nil, nil
		if !reflect.DeepEqual(cc, c) {
			t.Errorf("%s chain %d:\ncommand line %+v\nweb          %+v", most, i, cc, c)
		}
	}

	var gs query.Goroutines
	cli(&gs, "goroutines", "--json", "--top", "0")
	ws := overview.Routines
	if gs.Count != ws.Count || gs.MaxLive != ws.MaxLive || gs.Lifetime != ws.Lifetime || gs.Work != ws.Work ||
		!reflect.DeepEqual(gs.StartedBy, ws.StartedBy) {
		t.Errorf("goroutines:\ncommand line %+v\nweb          %+v", gs, ws)
	}

	// The flame graph: its root holds every traced call's time, as the
	// folded export's lines add up to; by self time, its first level is
	// report's self time.
	out, err := exec.Command(bin, "export", "--format", "folded", trace).Output()
	if err != nil {
		t.Fatal(err)
	}
	var folded int64
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		n, err := strconv.ParseInt(line[strings.LastIndexByte(line, ' ')+1:], 10, 64)
		if err != nil {
			t.Fatalf("folded line %q", line)
		}
		folded += n
	}
	var flame query.Tree
	web(&flame, "flame", nil)
	if flame.Value[0] != folded {
		t.Errorf("flame graph root %d ns, folded stacks add up to %d ns", flame.Value[0], folded)
	}
	var inverted query.Tree
	web(&inverted, "flame", url.Values{"mode": {"self"}})
	self := map[string]int64{}
	for i := 1; i < inverted.Len(); i++ {
		if inverted.Parent[i] == 0 {
			self[inverted.Names[inverted.Name[i]]] = inverted.Value[i]
		}
	}
	cut := flame.Value[0] / 1e6 // the page leaves out thinner boxes
	for _, f := range report.Functions {
		if f.SelfNs > cut && self[f.Name] != f.SelfNs {
			t.Errorf("%s: self time %d ns in report, %d in the flame graph", f.Name, f.SelfNs, self[f.Name])
		}
	}
}
