//go:build unix

package calltrail_test

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/calltrail/calltrail/tracefile"
)

// These tests run a real traced program, testdata/tracee, and check what
// the process and its trace file look like after each way a Go program
// can end.

var (
	buildOnce sync.Once
	tracedBin string
	plainBin  string
	buildErr  error
)

func binaries(t *testing.T) (traced, plain string) {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tracee")
		if err != nil {
			buildErr = err
			return
		}
		tracedBin, plainBin = filepath.Join(dir, "traced"), filepath.Join(dir, "plain")
		for _, b := range []struct{ out, tags string }{{tracedBin, "calltrail"}, {plainBin, ""}} {
			cmd := exec.Command("go", "build", "-tags", b.tags, "-o", b.out, "./testdata/tracee")
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = errors.New(string(out))
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatalf("building testdata/tracee: %v", buildErr)
	}
	return tracedBin, plainBin
}

type result struct {
	stdout, stderr string
	status         syscall.WaitStatus
	trace          string
}

// start runs bin with mode, tracing to a fresh file.
func start(t *testing.T, bin, mode string, env ...string) (*exec.Cmd, *bufio.Reader, *strings.Builder, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "trace.out")
	cmd := exec.Command(bin, mode)
	cmd.Env = append(os.Environ(), append([]string{"CALLTRAIL_OUT=" + out}, env...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewReader(stdout), &stderr, out
}

func finish(t *testing.T, cmd *exec.Cmd, stdout *bufio.Reader, stderr *strings.Builder, trace string) result {
	t.Helper()
	rest, _ := io.ReadAll(stdout)
	cmd.Wait()
	return result{stdout: string(rest), stderr: stderr.String(), status: cmd.ProcessState.Sys().(syscall.WaitStatus), trace: trace}
}

func runMode(t *testing.T, bin, mode string, env ...string) result {
	cmd, stdout, stderr, trace := start(t, bin, mode, env...)
	return finish(t, cmd, stdout, stderr, trace)
}

func waitReady(t *testing.T, r *bufio.Reader) {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("tracee said %q, %v; want ready", line, err)
	}
}

// summary reads a trace to its end and checks it is well formed.
type summary struct {
	calls      int
	unfinished int
	panics     []string
	end        string
	ended      bool
	last       time.Duration
	err        error
}

func readSummary(t *testing.T, path string) summary {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := tracefile.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var s summary
	for {
		ev, err := r.Next()
		if err != nil {
			if err != io.EOF {
				s.err = err
			}
			break
		}
		if ev.Kind == tracefile.EnterEvent {
			s.calls++
		}
		if ev.Kind == tracefile.ExitEvent {
			switch ev.Exit {
			case tracefile.Unfinished:
				s.unfinished++
			case tracefile.Panic:
				s.panics = append(s.panics, r.Func(ev.Func).Name)
			}
		}
	}
	s.end, s.ended = r.End()
	s.last = time.Duration(r.MaxTime())
	return s
}

func TestProcessReturn(t *testing.T) {
	traced, _ := binaries(t)
	r := runMode(t, traced, "return")
	if r.status.ExitStatus() != 0 {
		t.Fatalf("exit status %d; stderr:\n%s", r.status.ExitStatus(), r.stderr)
	}
	s := readSummary(t, r.trace)
	// main, and work(5) makes 15 calls of work.
	if s.calls != 16 || s.unfinished != 0 || s.err != nil || s.end != "main returned" {
		t.Errorf("got %+v, want 16 calls, none unfinished, ended by main returning", s)
	}
}

// TestProcessPanic checks an uncaught panic ends the program exactly as
// without tracing (message, exit status), with the trace complete.
func TestProcessPanic(t *testing.T) {
	traced, plain := binaries(t)
	for _, mode := range []string{"panic", "gopanic"} {
		t.Run(mode, func(t *testing.T) {
			want := runMode(t, plain, mode)
			got := runMode(t, traced, mode)
			if got.status.ExitStatus() != want.status.ExitStatus() || want.status.ExitStatus() != 2 {
				t.Errorf("exit status %d, want %d", got.status.ExitStatus(), want.status.ExitStatus())
			}
			first := func(s string) string { return strings.SplitN(s, "\n", 2)[0] }
			if first(got.stderr) != first(want.stderr) || first(want.stderr) != "panic: boom" {
				t.Errorf("stderr starts %q, want %q", first(got.stderr), first(want.stderr))
			}
			s := readSummary(t, got.trace)
			if s.err != nil || !s.ended || s.end != "panic" {
				t.Errorf("trace: end %q (ended %v), error %v; want a complete trace ended by the panic", s.end, s.ended, s.err)
			}
			if len(s.panics) == 0 || s.panics[0] != "main.boom" {
				t.Errorf("calls left by panic: %v, want main.boom first", s.panics)
			}
		})
	}
}

func TestProcessSignals(t *testing.T) {
	traced, _ := binaries(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, stdout, stderr, trace := start(t, traced, "wait")
			waitReady(t, stdout)
			cmd.Process.Signal(sig)
			r := finish(t, cmd, stdout, stderr, trace)
			if !r.status.Signaled() || r.status.Signal() != sig {
				t.Errorf("status %v, want killed by %v as without tracing", r.status, sig)
			}
			s := readSummary(t, trace)
			if s.err != nil || s.end != "signal: "+sig.String() {
				t.Errorf("trace ended %q, error %v; want ended by the signal", s.end, s.err)
			}
			if s.unfinished != 2 { // main and wait were running
				t.Errorf("%d unfinished calls, want 2", s.unfinished)
			}
		})
	}
}

// TestProcessHandledSignal checks a program that handles SIGINT itself
// still gets it, and goes on, traced, to return normally.
func TestProcessHandledSignal(t *testing.T) {
	traced, _ := binaries(t)
	cmd, stdout, stderr, trace := start(t, traced, "handle")
	waitReady(t, stdout)
	cmd.Process.Signal(syscall.SIGINT)
	r := finish(t, cmd, stdout, stderr, trace)
	if r.status.ExitStatus() != 0 || r.stdout != "handled interrupt\n" {
		t.Fatalf("status %v, stdout %q; want the program's own handler to run", r.status, r.stdout)
	}
	s := readSummary(t, trace)
	if s.end != "main returned" || s.unfinished != 0 {
		t.Errorf("trace ended %q with %d unfinished calls; want main returned", s.end, s.unfinished)
	}
}

// TestProcessKilled checks a trace is readable after SIGKILL, up to about
// the last periodic write.
func TestProcessKilled(t *testing.T) {
	traced, _ := binaries(t)
	cmd, stdout, stderr, trace := start(t, traced, "spin", "CALLTRAIL_BUFFER=1MiB")
	waitReady(t, stdout)
	began := time.Now()
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Kill()
	finish(t, cmd, stdout, stderr, trace)
	ran := time.Since(began)
	s := readSummary(t, trace)
	if s.ended {
		t.Errorf("a killed program's trace has an end record %q", s.end)
	}
	if s.calls < 1000 {
		t.Errorf("only %d calls readable", s.calls)
	}
	if s.err != nil && !errors.Is(s.err, tracefile.ErrTruncated) {
		t.Errorf("reading: %v", s.err)
	}
	// The writer writes every 100ms; allow a second for a slow machine.
	if s.last < ran-time.Second-500*time.Millisecond {
		t.Errorf("last event at %v into a run of more than %v: more than a second lost", s.last, ran)
	}
}

// TestProcessExit checks os.Exit leaves a readable trace holding what the
// periodic writes wrote, and a complete one after calltrail.Stop.
func TestProcessExit(t *testing.T) {
	traced, _ := binaries(t)
	for _, tt := range []struct {
		mode, end string
		ended     bool
	}{{"exit", "", false}, {"stopexit", "stopped", true}} {
		r := runMode(t, traced, tt.mode)
		if r.status.ExitStatus() != 3 {
			t.Fatalf("%s: exit status %d, want 3", tt.mode, r.status.ExitStatus())
		}
		s := readSummary(t, r.trace)
		if s.err != nil || s.calls != 16 || s.ended != tt.ended || s.end != tt.end {
			t.Errorf("%s: %d calls, end %q (%v), error %v; want 16 calls, end %q", tt.mode, s.calls, s.end, s.ended, s.err, tt.end)
		}
	}
}

func TestProcessOff(t *testing.T) {
	traced, _ := binaries(t)
	r := runMode(t, traced, "return", "CALLTRAIL=off")
	if r.status.ExitStatus() != 0 {
		t.Fatal(r.stderr)
	}
	if _, err := os.Stat(r.trace); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CALLTRAIL=off wrote %s (%v)", r.trace, err)
	}
}

func TestProcessText(t *testing.T) {
	traced, _ := binaries(t)
	r := runMode(t, traced, "return", "CALLTRAIL_TEXT=stderr")
	want := "g[01]:\t->main.main\ng[01]:\t\t->main.work\ng[01]:\t\t\t->main.work\n"
	if !strings.HasPrefix(r.stderr, want) {
		t.Errorf("stderr starts %q, want %q", r.stderr[:min(len(r.stderr), 80)], want)
	}
	if !strings.Contains(r.stderr, "g[01]:\t<-main.main ") {
		t.Errorf("no exit line for main.main in:\n%s", r.stderr)
	}
}
