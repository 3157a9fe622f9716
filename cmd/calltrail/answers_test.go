//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/clitest"
	"github.com/calltrail/calltrail/internal/oracle"
	"github.com/calltrail/calltrail/query"
)

// checkAnswers fails the test for every disagreement between calltrail's
// views of the trace at path.
func checkAnswers(t *testing.T, path string) {
	t.Helper()
	if clitest.Race {
		// The oracle runs on one goroutine, its readers reading on it
		// too (none reads ahead): the race detector finds nothing in
		// it, and slowed it tenfold. The passes without it run it.
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range oracle.Check(filepath.Base(path), data) {
		t.Error(err)
	}
}

// TestIndirectRecursion: functions calling each other fold as a cycle,
// never dropping one of them, and distinct paths stay distinct chains;
// a deep start folds into the shallow one of its shape.
func TestIndirectRecursion(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "evenodd.out")
	exact(t, "run", "-o", trace, "./evenodd")
	code, out, errOut := runCmd("chains", "main.leaf", trace)
	if code != 0 {
		t.Fatalf("chains: exit %d\n%s", code, errOut)
	}
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "main.") {
			got = append(got, line)
		}
	}
	want := []string{
		"main.main -> (main.even -> main.odd) ×20 -> main.even -> main.leaf", // even(4), even(40)
		"main.main -> (main.odd -> main.even) ×2 -> main.leaf",               // odd(3)
		"main.main -> main.even -> main.leaf",                                // even(0)
		"main.main -> main.even -> main.odd -> main.even -> main.leaf",       // even(2)
		"main.main -> main.odd -> main.even -> main.leaf",                    // odd(1)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("chains main.leaf:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	checkAnswers(t, trace)
}

// report is what report --json prints.
type report struct {
	Findings  []struct{ Kind, Function, Message string }
	Functions []query.Function
}

// reportJSON runs report --json with args.
func reportJSON(t *testing.T, args ...string) report {
	t.Helper()
	code, stdout, stderr := runCmd(append([]string{"report", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	var rep report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// endProgram reads lines to the end of its input, the last read
// returning io.EOF, and fails to parse one line of three.
var endProgram = map[string]string{
	"go.mod": "module example.com/lines\n\ngo 1.22\n",
	"main.go": `package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

func next(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(line), nil
}

func parse(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("line %q: %w", s, err)
	}
	return n, nil
}

func main() {
	r := bufio.NewReader(strings.NewReader("1\nx\n3\n"))
	sum := 0
	for {
		line, err := next(r)
		if err == io.EOF {
			break
		}
		if n, err := parse(line); err == nil {
			sum += n
		}
	}
	fmt.Println(sum)
}
`,
}

// TestEndIsNotFailure: a call returning io.EOF, the end of its input, is
// not counted as failed anywhere, and its message stays in sight; a real
// failure still is.
func TestEndIsNotFailure(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, endProgram)
	chdir(t, dir)
	if code, stdout, stderr := runCmd("run", "."); code != 0 || stdout != "4\n" {
		t.Fatalf("calltrail run: exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	rep := reportJSON(t)
	for _, f := range rep.Functions {
		want := map[string]uint64{"main.next": 0, "main.parse": 1}[f.Name]
		if f.Errors != want {
			t.Errorf("report: %s has %d errors, want %d", f.Name, f.Errors, want)
		}
	}
	for _, f := range rep.Findings {
		if f.Function == "main.next" {
			t.Errorf("a finding about main.next: %s", f.Message)
		}
	}
	// The end is still said, where errors are listed.
	code, stdout, _ := runCmd("chains", "main.next")
	if code != 0 || !strings.Contains(stdout, `*errors.errorString "EOF"`) || strings.Contains(stdout, "failed") {
		t.Errorf("chains main.next: exit %d\n%s", code, stdout)
	}
	if code, stdout, _ = runCmd("chains", "--errors", "main.next"); code != 0 || !strings.Contains(stdout, "no calls") {
		t.Errorf("chains --errors main.next: exit %d, want no calls\n%s", code, stdout)
	}
	checkAnswers(t, "calltrail.out")
}

// TestOnCPU: an instance of a generic function, which the CPU profile
// names by its shape (main.sumSq[go.shape.float64]), has its CPU time,
// and no finding takes it for an untraced callee; the time calltrail's
// runtime spends recording fib's 2.7 million tiny calls is tracing, not
// waiting. CPU samples are taken per CPU time, so the shares checked
// hold on a busy machine too.
func TestOnCPU(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "oncpu.out")
	exact(t, "run", "-o", trace, "./oncpu")
	rep := reportJSON(t, trace)
	for _, f := range rep.Findings {
		if strings.Contains(f.Message, "go.shape") {
			t.Errorf("a finding names an instance of a traced function as untraced: %s", f.Message)
		}
	}
	const ms = int64(1e6)
	got := map[string]bool{}
	for _, f := range rep.Functions {
		if f.CPUNs == nil || f.TracingNs == nil || f.WaitNs == nil {
			t.Fatalf("%s: no time on and off CPU in a trace with a CPU profile", f.Name)
		}
		cpu, tracing, wait := *f.CPUNs, *f.TracingNs, *f.WaitNs
		if wait != max(f.TotalNs-cpu-tracing, 0) {
			t.Errorf("%s: total %d, on CPU %d, tracing %d, waiting %d: waiting is not the rest", f.Name, f.TotalNs, cpu, tracing, wait)
		}
		switch f.Name {
		case "main.sumSq[...]":
			got[f.Name] = true
			if cpu < 100*ms || 10*cpu < 9*(cpu+tracing) {
				t.Errorf("%s: %v on CPU, %v tracing; want at least 100ms on CPU, nine tenths of its samples", f.Name, cpu, tracing)
			}
		case "main.fib":
			got[f.Name] = true
			if tracing < 30*ms || 2*tracing < cpu+tracing {
				t.Errorf("%s: %v on CPU, %v tracing; want at least 30ms tracing, half of its samples", f.Name, cpu, tracing)
			}
		}
	}
	if len(got) != 2 {
		t.Errorf("report lists %v of main.sumSq[...] and main.fib", got)
	}
	checkAnswers(t, trace)
	if clitest.Race {
		return // what follows is what the verbs say, not how they share memory
	}
	// Under a window the profile is left out: report, whose columns of
	// time on and off CPU go, and flame --cpu say why; chains, which
	// shows no such time, says nothing of it.
	const why = "profiles are the whole run's, not the calls -window selects"
	if _, _, errOut := runCmd("report", "-window", "1ms-", trace); !strings.Contains(errOut, why) {
		t.Errorf("report -window: stderr %q, want it to say %q", errOut, why)
	}
	if code, _, errOut := runCmd("flame", "--cpu", "-window", "1ms-", "-o", filepath.Join(t.TempDir(), "f.svg"), trace); code != 1 || !strings.Contains(errOut, why) {
		t.Errorf("flame --cpu -window: exit %d, stderr %q, want 1 and %q", code, errOut, why)
	}
	if code, _, errOut := runCmd("chains", "-window", "1ms-", "main.fib", trace); code != 0 || errOut != "" {
		t.Errorf("chains -window: exit %d, stderr %q, want 0 and nothing", code, errOut)
	}
}

// serverProgram serves HTTP from a traced function that blocks in the
// untraced http.Server.Serve for the whole run, while main sends it
// requests, each handled by a little work.
var serverProgram = map[string]string{
	"go.mod": "module example.com/server\n\ngo 1.22\n",
	"main.go": `package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

func work(n int) int {
	s := 0
	for i := range n * 100000 {
		s += i % 7
	}
	return s
}

func handle(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintln(w, work(len(r.URL.Path)))
}

func serve(srv *http.Server, ln net.Listener) {
	srv.Serve(ln)
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(handle)}
	done := make(chan struct{})
	go func() { serve(srv, ln); close(done) }()
	for i := range 200 {
		resp, err := http.Get("http://" + ln.Addr().String() + "/" + strings.Repeat("x", i%5+1))
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	srv.Shutdown(context.Background())
	<-done
}
`,
}

// TestBlockedIsNotBusy: functions blocked in untraced callees (a
// server's accept loop, a client waiting for responses) are not said to
// be busy in their own code, with the CPU profile (their time is waiting)
// or without it (the finding says it cannot tell).
func TestBlockedIsNotBusy(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, serverProgram)
	chdir(t, dir)
	for _, profiles := range []string{"cpu", "none"} {
		trace := filepath.Join(dir, profiles+".out")
		if code, _, stderr := runCmd("run", "--profiles", profiles, "-o", trace, "."); code != 0 {
			t.Fatalf("calltrail run --profiles %s: exit %d\n%s", profiles, code, stderr)
		}
		rep := reportJSON(t, trace)
		for _, f := range rep.Findings {
			// main.serve blocks in Serve; main.main in http.Get.
			blocked := f.Function == "main.serve" || f.Function == "main.main"
			if f.Kind == "self" && (blocked && !strings.Contains(f.Message, "blocked") || profiles == "none" && strings.Contains(f.Message, "in its own code")) {
				t.Errorf("--profiles %s: %s", profiles, f.Message)
			}
		}
		for _, f := range rep.Functions {
			if f.Name == "main.serve" && f.CPUNs != nil && *f.WaitNs < f.TotalNs*8/10 {
				t.Errorf("--profiles %s: main.serve waits %v of %v", profiles, time.Duration(*f.WaitNs), time.Duration(f.TotalNs))
			}
		}
		checkAnswers(t, trace)
	}
}
