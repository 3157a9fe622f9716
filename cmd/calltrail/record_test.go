//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/clitest"
	"github.com/calltrail/calltrail/live"
	"github.com/calltrail/calltrail/tracefile"
)

// service builds, with calltrail build, a program that calls main.D
// through main.B (even i) or main.C (odd i), for ever (or, with SVC_PACE
// set in its environment, about a hundred times a millisecond), and
// imports nothing of calltrail's. It returns the binary, built once a
// test binary.
func service(t *testing.T) string {
	t.Helper()
	serviceBuilt.once.Do(func() { serviceBuilt.bin, serviceBuilt.err = buildService(clitest.Dir(t)) })
	if serviceBuilt.err != nil {
		t.Fatal(serviceBuilt.err)
	}
	return serviceBuilt.bin
}

var serviceBuilt built

func buildService(shared string) (string, error) {
	dir, err := os.MkdirTemp(shared, "svc")
	if err != nil {
		return "", err
	}
	files := map[string]string{
		"go.mod": "module example.com/svc\n\ngo 1.22\n",
		"main.go": `package main

import (
	"fmt"
	"os"
	"time"
)

//go:noinline
func D(i int) int {
	if i%5000 == 0 {
		time.Sleep(200 * time.Microsecond)
	}
	return i * 2
}

//go:noinline
func B(i int) int { return D(i) + 1 }

//go:noinline
func C(i int) int { return D(i) + 2 }

//go:noinline
func A(i int) int {
	if i%2 == 0 {
		return B(i)
	}
	return C(i)
}

func main() {
	fmt.Println("ready")
	// SVC_PACE paces the calls: a pause each hundred loops.
	pace := os.Getenv("SVC_PACE") != ""
	for i := 0; ; i++ {
		A(i)
		if pace && i%100 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}
`,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			return "", err
		}
	}
	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	bin := filepath.Join(dir, "svc")
	// It does not import net/http: the endpoint is asked for.
	if code, _, stderr := runCmd("build", "--live", "-o", bin, "."); code != 0 {
		return "", fmt.Errorf("calltrail build: exit %d: %s", code, stderr)
	}
	return bin, nil
}

// startService starts cmd with the control endpoint on a free loopback
// port and the given environment, and returns the address once the
// endpoint answers. The program is killed when the test ends.
func startService(tb testing.TB, cmd *exec.Cmd, env ...string) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	// Only the variables asked for: calltrail test, run in this process
	// by other tests, leaves CALLTRAIL_PROFILES and others set, and a
	// program that profiles itself cannot be captured with --cpu.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CALLTRAIL") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "CALLTRAIL_HTTP="+addr)
	if clitest.Race {
		// A flight window of 1 MiB, not 32: what this process reads
		// of it, slowed tenfold by the race detector, is no less
		// concurrent for being smaller. The variables asked for may
		// set another.
		cmd.Env = append(cmd.Env, "CALLTRAIL_BUFFER=1MiB")
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := http.Get("http://" + addr + live.Prefix + "counters")
		if err == nil {
			resp.Body.Close()
			return addr
		} else if time.Now().After(deadline) {
			tb.Fatalf("the endpoint at %s does not answer: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func counters(addr string) (live.Counters, error) {
	var c live.Counters
	resp, err := http.Get("http://" + addr + live.Prefix + "counters")
	if err != nil {
		return c, err
	}
	defer resp.Body.Close()
	return c, json.NewDecoder(resp.Body).Decode(&c)
}

// TestRecordFlight is the flight recorder end to end: a service built by
// calltrail build, run with CALLTRAIL_HTTP and nothing else, serves its
// last calls to calltrail record, whose trace chains reads.
func TestRecordFlight(t *testing.T) {
	bin := service(t)
	addr := startService(t, exec.Command(bin))
	time.Sleep(300 * time.Millisecond)
	out := filepath.Join(t.TempDir(), "rec.out")
	if code, _, stderr := runCmd("record", "-o", out, addr); code != 0 || strings.Contains(stderr, "holds no call") {
		t.Fatalf("record: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCmd("chains", "main.D", out)
	if code != 0 || !strings.Contains(stdout, "main.B") || !strings.Contains(stdout, "main.C") {
		t.Fatalf("chains of the snapshot: exit %d: %s%s", code, stdout, stderr)
	}
	code, stdout, _ = runCmd("info", out)
	if code != 0 || !strings.Contains(stdout, "(flight recorder)") {
		t.Errorf("info of the snapshot: %s", stdout)
	}
	checkAnswers(t, out)
	if c, err := counters(addr); err != nil || c.Mode != "flight" || !c.Recording || c.Calls == 0 || c.PerSecond <= 0 {
		t.Errorf("counters: %+v, %v", c, err)
	}
}

// TestRecordPaused checks that a paused program records nothing until a
// capture switches it on, and is paused again after. It asks for the
// runtime's profiles, as a build with --profiles does: a flight recorder
// runs none of its own, and the capture takes the CPU profile.
func TestRecordPaused(t *testing.T) {
	bin := service(t)
	addr := startService(t, exec.Command(bin), "CALLTRAIL=paused", "CALLTRAIL_PROFILES=cpu,mutex,block")
	if c, err := counters(addr); err != nil || c.Recording || c.Calls != 0 {
		t.Fatalf("a paused program's counters: %+v, %v", c, err)
	}
	// A snapshot of it holds no call, which record says.
	idle := filepath.Join(t.TempDir(), "idle.out")
	if code, _, stderr := runCmd("record", "-o", idle, addr); code != 0 || !strings.Contains(stderr, "warning: the trace holds no call") {
		t.Errorf("record of a paused program: exit %d: %s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "cap.out")
	if code, _, stderr := runCmd("record", "--seconds", "0.5", "--cpu", "-o", out, addr); code != 0 {
		t.Fatalf("record --seconds: exit %d: %s", code, stderr)
	}
	// The capture holds the calls and the CPU profile of its time.
	code, stdout, stderr := runCmd("report", "--json", out)
	if code != 0 || !strings.Contains(stdout, `"main.D"`) || !strings.Contains(stdout, `"cpu_ns"`) {
		t.Fatalf("report of the capture: exit %d: %.300s%s", code, stdout, stderr)
	}
	c, err := counters(addr)
	if err != nil || c.Recording || c.Calls == 0 {
		t.Errorf("counters after the capture: %+v, %v", c, err)
	}
}

// TestRecordToken checks that with CALLTRAIL_HTTP_TOKEN in the program's
// environment, record needs the same token.
func TestRecordToken(t *testing.T) {
	bin := service(t)
	addr := startService(t, exec.Command(bin), "CALLTRAIL_HTTP_TOKEN=s3cret")
	out := filepath.Join(t.TempDir(), "rec.out")
	t.Setenv("CALLTRAIL_HTTP_TOKEN", "")
	code, _, stderr := runCmd("record", "-o", out, addr)
	if code != 1 || !strings.Contains(stderr, "401") || !strings.HasSuffix(stderr, "\n") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("record without the token: exit %d: %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("record without the token wrote %s", out)
	}
	t.Setenv("CALLTRAIL_HTTP_TOKEN", "s3cret")
	if code, _, stderr := runCmd("record", "-o", out, addr); code != 0 {
		t.Errorf("record with the token: exit %d: %s", code, stderr)
	}
}

// TestTop checks that top shows a running program's busiest functions,
// refreshed.
func TestTop(t *testing.T) {
	bin := service(t)
	// Paced: at full speed, the service keeps both cores busy, and each
	// refresh waits for its busy writer.
	addr := startService(t, exec.Command(bin), "SVC_PACE=1")
	code, stdout, stderr := runCmd("top", "--count", "2", "--every", "200ms", "-n", "5", addr)
	if code != 0 || strings.Count(stdout, "calls/s") != 2 || !strings.Contains(stdout, "main.D") {
		t.Fatalf("top: exit %d: %s%s", code, stdout, stderr)
	}
	// A program not recording says so, rather than show no calls.
	paused := startService(t, exec.Command(bin), "SVC_PACE=1", "CALLTRAIL=paused")
	if code, stdout, stderr := runCmd("top", "--count", "1", "--every", "200ms", paused); code != 0 || !strings.Contains(stdout, "recording is off in "+paused) {
		t.Errorf("top of a paused program: exit %d: %s%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "recording is off") {
		t.Errorf("top of a program recording says it is off: %s", stdout)
	}
	if code, _, stderr := runCmd("top", "--sort", "nonsense", addr); code != 2 || !strings.Contains(stderr, "--sort") {
		t.Errorf("top --sort nonsense: exit %d: %s", code, stderr)
	}
	// The order's figure is a column.
	for key, column := range map[string]string{"mean": "  mean  ", "errors": "  errors/s  "} {
		if code, stdout, stderr := runCmd("top", "--count", "1", "--every", "200ms", "--sort", key, addr); code != 0 || !strings.Contains(stdout, column) {
			t.Errorf("top --sort %s: exit %d, no column %q: %s%s", key, code, column, stdout, stderr)
		}
	}
	// Right after a capture, as before: no figure past what the window
	// and the service's one goroutine allow. At full speed, where its
	// calls take almost all of its goroutine's time: a figure twice
	// what the window gives is then past it.
	addr = startService(t, exec.Command(bin))
	if code, _, stderr := runCmd("record", "--seconds", "0.3", "-o", filepath.Join(t.TempDir(), "rec.out"), addr); code != 0 {
		t.Fatalf("record: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = runCmd("top", "--count", "10", "--every", "100ms", addr)
	if code != 0 {
		t.Fatalf("top: exit %d: %s", code, stderr)
	}
	var window time.Duration
	rows := 0
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "calltrail top"):
			i := slices.Index(f, "last")
			if i < 0 || i+1 >= len(f) {
				t.Fatalf("top's header: %q", line)
			}
			window, _ = time.ParseDuration(f[i+1])
		case len(f) == 6 && strings.HasPrefix(f[5], "main."):
			rows++
			total, err1 := time.ParseDuration(f[2])
			maxCall, err2 := time.ParseDuration(f[4])
			if err1 != nil || err2 != nil || total > time.Second+time.Millisecond || maxCall > window+time.Millisecond {
				t.Errorf("top, a window of %v: %s takes %s a second, its longest call %s", window, f[5], f[2], f[4])
			}
		}
	}
	if rows < 10 {
		t.Errorf("top printed %d rows of functions in 10 refreshes:\n%s", rows, stdout)
	}
}

// TestTriggerService checks, end to end, that a trigger on a slow call
// keeps the call with the chain that led to it, in a file chains reads.
func TestTriggerService(t *testing.T) {
	bin := service(t)
	dir := t.TempDir()
	startService(t, exec.Command(bin), "CALLTRAIL_TRIGGER=main.D>150us", "CALLTRAIL_TRIGGER_DIR="+dir)
	var files []string
	for deadline := time.Now().Add(10 * time.Second); len(files) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no trigger file")
		}
		time.Sleep(50 * time.Millisecond)
		files, _ = filepath.Glob(filepath.Join(dir, "calltrail-*.trace"))
	}
	code, stdout, stderr := runCmd("chains", "--json", "main.D", files[0])
	if code != 0 || !strings.Contains(stdout, "main.A") || !strings.Contains(stdout, "main.B") {
		t.Fatalf("chains of the trigger's file: exit %d: %.400s%s", code, stdout, stderr)
	}
	code, stdout, _ = runCmd("info", files[0])
	if code != 0 || !strings.Contains(stdout, "trigger main.D>150us: a call of main.D took") {
		t.Errorf("info of the trigger's file: %s", stdout)
	}
}

// TestRecordEndless: an endpoint that sends without end makes record
// fail once it has sent more than any window, not take all memory.
func TestRecordEndless(t *testing.T) {
	defer func(m int64) { maxBody = m }(maxBody)
	maxBody = 1 << 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "rec.out")
	code, _, stderr := runCmd("record", "-o", out, srv.URL)
	if code != 1 || !strings.Contains(stderr, "sent more than 1 MiB") {
		t.Errorf("record from an endless endpoint: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("record left %s behind", out)
	}
}

// TestShortWindow: a capture that holds less of the time asked than a
// tenth short says so; one that holds it, or a trace of no window, not.
func TestShortWindow(t *testing.T) {
	win := func(from, to time.Duration) tracefile.Meta {
		var m tracefile.Meta
		m.Window.Start, m.Window.End = from, to
		return m
	}
	for _, c := range []struct {
		m     tracefile.Meta
		asked time.Duration
		want  string
	}{
		{win(1920*time.Millisecond, 3*time.Second), 2 * time.Second, "the last 1.08s of the 2s asked"},
		{win(time.Second, 2900*time.Millisecond), 2 * time.Second, ""},
		{win(time.Second, 3*time.Second), 2 * time.Second, ""},
		{tracefile.Meta{}, 2 * time.Second, ""},
		{win(time.Second, 1100*time.Millisecond), 0, ""},
	} {
		got := shortWindow(c.m, c.asked)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("window %v-%v, asked %v: %q, want %q", c.m.Window.Start, c.m.Window.End, c.asked, got, c.want)
		}
	}
}
