package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
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
