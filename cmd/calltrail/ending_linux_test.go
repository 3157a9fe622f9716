package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/tracetest"
)

// brokenPipeProgram prints numbered lines until its output breaks:
// ignoring the write's error, or stopping at it with a message and exit
// status 1, as a program that checks its errors does.
var brokenPipeProgram = map[string]string{
	"go.mod": "module example.com/lines\n\ngo 1.22\n",
	"main.go": `package main

import (
	"bufio"
	"fmt"
	"os"
)

func line(i int) string {
	if i%7 == 3 {
		return fmt.Sprintf("line %d, a seventh", i)
	}
	return fmt.Sprintf("line %d", i)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "check" {
		w := bufio.NewWriter(os.Stdout)
		for i := 0; ; i++ {
			if _, err := fmt.Fprintln(w, line(i)); err != nil {
				fmt.Fprintln(os.Stderr, "write:", err)
				os.Exit(1)
			}
		}
	}
	for i := 0; ; i++ {
		fmt.Println(line(i))
	}
}
`,
}

// TestBrokenPipe: a program whose reader goes away after one line (prog
// | head -1) dies of SIGPIPE as it does untraced, and its trace ends
// complete, saying so, with the calls it made.
func TestBrokenPipe(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, brokenPipeProgram)
	chdir(t, dir)
	if code, _, stderr := runCmd("build", "-o", "lines", "."); code != 0 {
		t.Fatalf("calltrail build: exit %d\n%s", code, stderr)
	}
	for _, mode := range []string{"ignore", "check"} {
		t.Run(mode, func(t *testing.T) {
			trace := filepath.Join(dir, mode+".trace")
			cmd := exec.Command("./lines", mode)
			cmd.Env = append(os.Environ(), "CALLTRAIL_OUT="+trace)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			first, err := bufio.NewReader(out).ReadString('\n')
			out.Close() // as head -1 does
			err = errors.Join(err, cmd.Wait())
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGPIPE {
				t.Fatalf("the program ended with %v, want death by SIGPIPE", err)
			}
			if first != "line 0\n" {
				t.Errorf("first line %q", first)
			}
			s := readSummary(t, trace)
			if s.End != "signal: broken pipe" || s.Calls < 2 {
				t.Errorf("trace ended %q with %d calls; want signal: broken pipe, main and line's", s.End, s.Calls)
			}
			checkAnswers(t, trace)
		})
	}
}

// TestOutputsInPlace: -o naming a pipe, or a link to one, as /dev/stdout
// is, writes into it, leaving the pipe and the link as they were; and
// calltrail run -o never replaces a file that is not a trace, such as the
// program's source or go.mod.
func TestOutputsInPlace(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.trace")
	data, err := tracetest.Build("1 +main.main 0\n1 +main.work 10\n1 - 90\n1 - 100\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trace, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{fifo, link} {
		got := make(chan string, 1)
		go func() {
			b, _ := os.ReadFile(fifo) // opens the pipe's reading end, and reads to its end
			got <- string(b)
		}()
		code, _, stderr := runCmd("export", "--format", "folded", "-o", out, trace)
		if code != 0 {
			t.Fatalf("export -o %s: exit %d: %s", out, code, stderr)
		}
		select {
		case s := <-got:
			if s != "main.main 20\nmain.main;main.work 80\n" {
				t.Errorf("export -o %s: the pipe read %q", out, s)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("export -o %s: nothing written into the pipe in 10s", out)
			// Let the reader go: a writer that opens and closes the
			// pipe ends its read.
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			<-got
		}
		if info, err := os.Lstat(fifo); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("export -o %s: the pipe is now %v (%v)", out, info.Mode(), err)
		}
		if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
			t.Errorf("export -o %s: the link is now %v (%v)", out, info.Mode(), err)
		}
	}

	writeFiles(t, dir, map[string]string{
		"go.mod":  "module example.com/hello\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc hello() string { return \"hello\" }\n\nfunc main() { println(hello()) }\n",
	})
	chdir(t, dir)
	for _, name := range []string{"main.go", "go.mod"} {
		before, _ := os.ReadFile(name)
		code, _, stderr := runCmd("run", "-o", name, ".")
		after, _ := os.ReadFile(name)
		if code != 2 || !strings.Contains(stderr, "that is the name of Go source") || string(after) != string(before) {
			t.Errorf("run -o %s: exit %d, %q; the file is %d bytes, was %d", name, code, stderr, len(after), len(before))
		}
	}
	// A trace there is replaced.
	if code, _, stderr := runCmd("run", "-o", trace, "."); code != 0 {
		t.Errorf("run -o over a trace: exit %d: %s", code, stderr)
	}
}
