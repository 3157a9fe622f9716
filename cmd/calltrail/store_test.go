//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/chtest"
	"github.com/calltrail/calltrail/internal/clitest"
	"github.com/calltrail/calltrail/query"
)

// startShards starts two ClickHouse servers, the shards of
// chtest.Cluster, for the test; it skips where clickhouse-server is not
// installed, unless CALLTRAIL_CLICKHOUSE=required (scripts/test.sh).
func startShards(t *testing.T) []*chtest.Server {
	t.Helper()
	if _, err := chtest.Binary(); err != nil {
		if os.Getenv("CALLTRAIL_CLICKHOUSE") == "required" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	servers, err := chtest.StartShards(t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chtest.Stop(servers) })
	return servers
}

// traceFailing builds examples/failing with calltrail build, runs it n
// times, and returns the n traces.
func traceFailing(t *testing.T, n int) []string {
	t.Helper()
	bin := clitest.Binary(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "failing")
	if out, err := exec.Command(bin, "build", "-o", prog, "../../examples/failing").CombinedOutput(); err != nil {
		t.Fatalf("calltrail build: %v\n%s", err, out)
	}
	var traces []string
	for i := 0; i < n; i++ {
		trace := filepath.Join(dir, fmt.Sprintf("p%d.trace", i))
		cmd := exec.Command(prog)
		cmd.Env = append(os.Environ(), "CALLTRAIL_OUT="+trace)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", prog, err, out)
		}
		traces = append(traces, trace)
	}
	return traces
}

// percent finds the percentages a finding gives.
var percent = regexp.MustCompile(`(\d+)%`)

// TestStoreChains traces ten processes, pushes their traces into a store
// of two shards and into one server, and checks that chains --from gives
// the exact union of the chains of the ten traces, as chains of each
// trace gives them; and that report --from counts every call.
func TestStoreChains(t *testing.T) {
	servers := startShards(t)
	traces := traceFailing(t, 10)
	sharded := "clickhouse://" + servers[0].Addr() + "/fleet?cluster=" + chtest.Cluster
	single := "clickhouse://" + servers[1].Addr() + "/fleet_one"
	for _, to := range []string{sharded, single} {
		if code, _, stderr := runCmd(append([]string{"push", "--to", to, "--service", "failing", "--label", "version=1"}, traces...)...); code != 0 {
			t.Fatalf("push --to %s: exit %d: %s", to, code, stderr)
		}
	}
	// Pushing again stores nothing more.
	if code, _, stderr := runCmd("push", "--to", sharded, "--service", "failing", traces[0]); code != 0 || !strings.Contains(stderr, "in the store already") {
		t.Fatalf("push again: exit %d: %s", code, stderr)
	}

	chains := func(args ...string) []query.Chain {
		t.Helper()
		code, stdout, stderr := runCmd(append([]string{"chains", "--json", "--slowest", "0"}, args...)...)
		if code != 0 {
			t.Fatalf("chains %v: exit %d: %s", args, code, stderr)
		}
		var res struct{ Chains []query.Chain }
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		return res.Chains
	}
	for _, errorsOnly := range []bool{false, true} {
		flags := []string{}
		if errorsOnly {
			flags = []string{"--errors"}
		}
		// The union of the traces' chains, as the store should give it.
		union := map[string]*query.Chain{}
		sums := map[string]int64{}
		spawners := map[string][]string{} // chains that started the goroutines, as text
		for _, tr := range traces {
			for _, c := range chains(append(flags, "main.D", tr)...) {
				k := query.Text(c.Path, " -> ")
				u := union[k]
				if u == nil {
					u = &query.Chain{Path: c.Path, SpawnedFrom: [][]query.Step{}, Slowest: []query.Call{}}
					union[k] = u
				}
				spawners[k] = addSpawners(spawners[k], c.SpawnedFrom)
				u.Calls += c.Calls
				u.TotalNs += c.TotalNs
				u.MaxNs = max(u.MaxNs, c.MaxNs)
				u.Panics += c.Panics
				u.Errors += c.Errors
			next:
				for _, m := range c.Messages {
					for i := range u.Messages {
						if u.Messages[i].Error == m.Error {
							u.Messages[i].Calls += m.Calls
							continue next
						}
					}
					u.Messages = append(u.Messages, m)
				}
				sums[k] += c.MeanNs * int64(c.Calls)
			}
		}
		if len(union) < 2 {
			t.Fatalf("the traces have %d chains to main.D", len(union))
		}
		spawned := 0
		for _, from := range []string{sharded, single} {
			got := chains(append(flags, "--from", from, "--service", "failing", "--label", "version=1", "main.D")...)
			if len(got) != len(union) {
				t.Errorf("--from %s: %d chains, the traces %d", from, len(got), len(union))
			}
			for _, c := range got {
				k := query.Text(c.Path, " -> ")
				u := union[k]
				if u == nil {
					t.Errorf("--from %s: chain %s in no trace", from, k)
					continue
				}
				// Means are rounded down in each trace: the store's,
				// of all calls, is within a nanosecond of theirs.
				if d := c.MeanNs - sums[k]/int64(c.Calls); d < 0 || d > 1 {
					t.Errorf("--from %s: %s: mean %d, traces' %d", from, k, c.MeanNs, sums[k]/int64(c.Calls))
				}
				// The spawners, whose counts the output does not give,
				// as a set: every one of every trace's.
				if got, want := addSpawners(nil, c.SpawnedFrom), spawners[k]; !reflect.DeepEqual(got, want) {
					t.Errorf("--from %s, %s: started from %q, the traces from %q", from, k, got, want)
				}
				if len(c.SpawnedFrom) > 0 {
					spawned++
				}
				c.SpawnedFrom = [][]query.Step{}
				want := *u
				want.MeanNs = c.MeanNs
				query.SortErrors(want.Messages)
				if len(want.Messages) == 0 {
					want.Messages = nil
				}
				if !reflect.DeepEqual(c, want) {
					t.Errorf("--from %s, %s:\n got %+v\nwant %+v", from, k, c, want)
				}
			}
		}
		if spawned == 0 {
			t.Errorf("no chain to main.D from the store says which chain started its goroutines")
		}
	}

	// report --from counts the calls of all ten.
	code, stdout, stderr := runCmd("report", "--json", "--from", sharded, "--label", "version=1")
	if code != 0 {
		t.Fatalf("report --from: exit %d: %s", code, stderr)
	}
	var rep struct{ Functions []query.Function }
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range rep.Functions {
		names = append(names, f.Name)
		if f.Name == "main.D" && f.Calls != 10*104 {
			t.Errorf("report --from: main.D called %d times, want %d", f.Calls, 10*104)
		}
	}
	sort.Strings(names)
	if !contains(names, "main.main") || !contains(names, "main.D") {
		t.Errorf("report --from: functions %v", names)
	}
	// diff --from compares two sets by their labels: the same set, no
	// change; against a set of nothing, every function gone.
	for _, pair := range [][2]string{{"version=1", "service=failing,version=1"}, {"version=1", "version=2"}} {
		code, stdout, stderr := runCmd("diff", "--json", "--top", "0", "--from", sharded, pair[0], pair[1])
		if code != 0 {
			t.Fatalf("diff --from %v: exit %d: %s", pair, code, stderr)
		}
		var d query.Diff
		if err := json.Unmarshal([]byte(stdout), &d); err != nil {
			t.Fatal(err)
		}
		if len(d.Functions) != len(rep.Functions) {
			t.Errorf("diff --from %v: %d functions, report %d", pair, len(d.Functions), len(rep.Functions))
		}
		for _, c := range d.Functions {
			if gone := pair[1] == "version=2"; c.Vanished != gone || c.BaseCalls == 0 || !gone && (c.NewCalls != c.BaseCalls || c.DeltaNs != 0) {
				t.Errorf("diff --from %v: %+v", pair, c)
			}
		}
	}
	// flame and serve --from draw the chains the store adds up.
	svg := filepath.Join(t.TempDir(), "fleet.svg")
	if code, _, stderr := runCmd("flame", "--from", sharded, "--label", "version=1", "-o", svg); code != 0 {
		t.Fatalf("flame --from: exit %d: %s", code, stderr)
	}
	if data, err := os.ReadFile(svg); err != nil || !strings.Contains(string(data), "main.handle") || !strings.Contains(string(data), "main.D") {
		t.Errorf("flame --from: the SVG lacks main.handle or main.D (%v)", err)
	}
	if code, _, _ := runCmd("flame", "--from", sharded, "--cpu"); code != 2 {
		t.Errorf("flame --from --cpu: exit %d, want 2", code)
	}
	checkServeFrom(t, sharded)

	// A selection of nothing, and bad input.
	if code, stdout, stderr := runCmd("report", "--from", sharded, "--label", "version=2"); code != 1 || stdout != "" || !strings.Contains(stderr, " version=2: no trace in the store matches the selection") {
		t.Errorf("report of no traces: exit %d: %q %q", code, stdout, stderr)
	}
	for _, args := range [][]string{
		{"report", "--from", "http://x"},
		{"report", "--from", sharded, "-g", "1"},
		{"chains", "--from", sharded, "main.nothing"},
		{"diff", "--from", sharded, "version=1"},
		{"diff", "--from", sharded, "version", "version=2"},
		{"push", "--to", sharded, filepath.Join(t.TempDir(), "missing.trace")},
	} {
		if code, _, stderr := runCmd(args...); code == 0 || len(stderr) == 0 {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}

// checkServeFrom runs serve --from store and checks that its flame graph
// and function view hold the store's chains of main.D.
func checkServeFrom(t *testing.T, store string) {
	t.Helper()
	cmd := exec.Command(clitest.Binary(t), "serve", "-http", "127.0.0.1:0", "--from", store)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("serve --from: %v: %s", err, stderr.String())
	}
	url := strings.Fields(strings.TrimPrefix(line, "calltrail serve: "))[0]
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %s: %s", path, resp.Status, body)
		}
		return string(body)
	}
	if flame := get("api/flame"); !strings.Contains(flame, "main.handle") || !strings.Contains(flame, "main.D") {
		t.Errorf("serve --from: the flame graph lacks main.handle or main.D: %.300s", flame)
	}
	if fn := get("api/func?name=main.D"); !strings.Contains(fn, "main.loadOverrides") {
		t.Errorf("serve --from: the function view of main.D lacks the chain through loadOverrides: %.300s", fn)
	}
	ov := get("api/overview")
	if !strings.Contains(ov, "read from a store") {
		t.Errorf("serve --from: the overview does not say the timeline is empty: %.300s", ov)
	}
	// A share of the program is at most all of it (a store's profile has
	// no goroutines' figures to measure the program by).
	var o struct{ Findings []struct{ Message string } }
	if err := json.Unmarshal([]byte(ov), &o); err != nil || len(o.Findings) == 0 {
		t.Errorf("serve --from: no findings in the overview (%v): %.300s", err, ov)
	}
	for _, f := range o.Findings {
		for _, m := range percent.FindAllStringSubmatch(f.Message, -1) {
			if n, _ := strconv.Atoi(m[1]); n > 100 {
				t.Errorf("serve --from: a finding says %s%%: %s", m[1], f.Message)
			}
		}
	}
}

// TestCollect runs two services and collects two windows of each into a
// store: chains --from then finds main.D's chains of both.
func TestCollect(t *testing.T) {
	servers := startShards(t)
	bin := service(t)
	a := startService(t, exec.Command(bin), "SVC_PACE=1")
	b := startService(t, exec.Command(bin), "SVC_PACE=1")
	to := "clickhouse://" + servers[0].Addr() + "/collected"
	// The calltrail binary, not this test process: pushing windows at
	// the race detector's pace would take most of the test.
	var errb bytes.Buffer
	cmd := exec.Command(clitest.Binary(t), "collect", "--to", to, "--every", "1s", "--count", "2", "--label", "run=c", a, b)
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("collect: %v: %s", err, errb.String())
	}
	stderr := errb.String()
	for _, addr := range []string{a, b} {
		if n := strings.Count(stderr, addr+": pushed "); n != 2 {
			t.Errorf("collect pushed %d windows of %s, want 2:\n%s", n, addr, stderr)
		}
	}
	code, stdout, stderr := runCmd("chains", "--from", to, "--label", "endpoint="+b, "main.D")
	if code != 0 || !strings.Contains(stdout, "main.B") || !strings.Contains(stdout, "main.C") {
		t.Errorf("chains --from of collected windows: exit %d: %s%s", code, stdout, stderr)
	}
	if code, _, stderr := runCmd("collect", "--to", to, "--every", "1s", "--count", "1", "127.0.0.1:1"); code != 1 || !strings.Contains(stderr, "no window pushed") {
		t.Errorf("collect from nothing: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCmd("collect", "--to", to, "--every", "1h", a); code != 2 || !strings.Contains(stderr, "want from 1s to 10m0s") {
		t.Errorf("collect of windows longer than a capture: exit %d: %s", code, stderr)
	}
}

// TestCollectInterrupted interrupts a collect of the longest windows from
// a paused program: collect ends at once, by the signal, and the program
// is paused again, not recording for the rest of the window.
func TestCollectInterrupted(t *testing.T) {
	servers := startShards(t)
	addr := startService(t, exec.Command(service(t)), "CALLTRAIL=paused")
	var errb bytes.Buffer
	cmd := exec.Command(clitest.Binary(t), "collect", "--to", "clickhouse://"+servers[0].Addr()+"/interrupted", "--every", "10m", addr)
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if c, err := counters(addr); err == nil && c.Recording {
			break // the capture has begun
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("collect did not begin a capture in a minute: %s", errb.String())
		}
	}
	cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-ended:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
			t.Errorf("collect interrupted ended with %v, want death by SIGINT: %s", err, errb.String())
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("collect of 10-minute windows still runs a minute after an interrupt: %s", errb.String())
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		c, err := counters(addr)
		if err == nil && !c.Recording {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the program still records a minute after collect was interrupted: %+v, %v", c, err)
		}
	}
}

// addSpawners adds to the sorted set of chains (as text) those of from.
func addSpawners(set []string, from [][]query.Step) []string {
	for _, p := range from {
		k := query.Text(p, " -> ")
		if i, ok := slices.BinarySearch(set, k); !ok {
			set = slices.Insert(set, i, k)
		}
	}
	return set
}
