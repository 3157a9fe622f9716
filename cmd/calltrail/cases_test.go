//go:build unix

package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The case studies of the seed documents, under examples/: calltrail run
// on the slow mode must name the culprit in its top finding, and the
// fixed mode must be faster, without that finding.
func TestCaseStudies(t *testing.T) {
	bin := calltrailBinary(t)
	cases := []struct {
		example     string
		slow, fixed []string
		kinds       string  // kinds the top finding may have
		culprit     string  // what the top finding must name
		timing      string  // how the program reports its time
		faster      float64 // how much faster fixed must be, at least
	}{
		{"marshal", []string{"-mode", "slow"}, []string{"-mode", "fixed"}, "wait", "sync.(*Mutex).Lock", `took (\d+) ms`, 2},
		{"wordcount", []string{"-mode", "slow"}, []string{"-mode", "fixed"}, "syscall", "os.(*File).Read", `in (\d+) ms`, 2},
		{"mandelbrot", []string{"-mode", "px"}, []string{"-mode", "row"}, "churn callee", "goroutine", `in (\d+) ms`, 2},
		{"rpc", []string{"-mode", "slow"}, []string{"-mode", "fixed"}, "callee", "log.(*Logger).Printf", `took (\d+) ms`, 2},
		// The seed's second step: the log line gone, reflection stays.
		{"rpc", []string{"-mode", "reflect"}, []string{"-mode", "fixed"}, "callee", "reflect.Value.Call", `took (\d+) ms`, 1.25},
		// Seed 003's steps, each fixing the culprit the one before named.
		{"logship", []string{"-mode", "regexp", "-n", "200000"}, []string{"-mode", "index", "-n", "200000"}, "callee", "regexp.", `in (\d+) ms`, 1.5},
		{"logship", []string{"-mode", "index", "-n", "200000"}, []string{"-mode", "clone", "-n", "200000"}, "callee", "fmt.Errorf", `in (\d+) ms`, 1.2},
		{"logship", []string{"-mode", "clone", "-n", "200000"}, []string{"-mode", "encoder", "-n", "200000"}, "callee", "encoding/json.Marshal", `in (\d+) ms`, 1.1},
		// What a sync costs depends on the disk: a narrow margin.
		{"logship", []string{"-mode", "encoder", "-n", "200000"}, []string{"-mode", "fixed", "-n", "200000"}, "syscall", "saveState", `in (\d+) ms`, 1.05},
	}
	for _, c := range cases {
		t.Run(c.example+c.slow[1], func(t *testing.T) {
			slowMs, slow := runCase(t, bin, c.example, c.slow, c.timing)
			if len(slow) == 0 || !strings.Contains(c.kinds, slow[0].Kind) || !strings.Contains(slow[0].Message, c.culprit) {
				t.Fatalf("top finding %+v; want a %s finding naming %s", slow, c.kinds, c.culprit)
			}
			fixedMs, fixed := runCase(t, bin, c.example, c.fixed, c.timing)
			for _, f := range fixed {
				if strings.Contains(f.Message, c.culprit) {
					t.Errorf("fixed mode still has the finding: %s", f.Message)
				}
			}
			// A wide margin, and a second chance: the machines are
			// shared, and another job can slow down either run.
			if float64(fixedMs)*c.faster > float64(slowMs) {
				t.Logf("fixed mode took %d ms, slow mode %d ms; once more", fixedMs, slowMs)
				s, _ := runCase(t, bin, c.example, c.slow, c.timing)
				f, _ := runCase(t, bin, c.example, c.fixed, c.timing)
				slowMs, fixedMs = min(slowMs, s), min(fixedMs, f)
			}
			if float64(fixedMs)*c.faster > float64(slowMs) {
				t.Errorf("fixed mode took %d ms at best, slow mode %d ms", fixedMs, slowMs)
			}
		})
	}
}

type findingJSON struct {
	Kind, Function, Message string
}

// runCase runs an example through calltrail run and returns the time the
// program reported and the findings of calltrail report.
func runCase(t *testing.T, bin, example string, args []string, timing string) (int, []findingJSON) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "trace.out")
	cmd := exec.Command(bin, append([]string{"run", "-o", trace, "../../examples/" + example}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", example, args, err, out)
	}
	m := regexp.MustCompile(timing).FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s %v printed %q", example, args, out)
	}
	ms, _ := strconv.Atoi(string(m[1]))
	rep, err := exec.Command(bin, "report", "--json", "--top", "1", trace).Output()
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ Findings []findingJSON }
	if err := json.Unmarshal(rep, &r); err != nil {
		t.Fatal(err)
	}
	return ms, r.Findings
}
