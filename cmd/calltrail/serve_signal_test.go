//go:build unix

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

	"github.com/calltrail/calltrail/internal/clitest"
)

// TestServeInterrupted: an interrupt is how serve is meant to be stopped,
// so it ends well: exit 0, nothing said.
func TestServeInterrupted(t *testing.T) {
	bin := clitest.Binary(t)
	cmd := exec.Command(bin, "serve", filepath.Join("..", "..", "tracefile", "testdata", "sample.trace"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "calltrail serve: http://") {
		cmd.Process.Kill()
		t.Fatalf("serve said %q, %v", line, err)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	// The trace's two dropped calls are said as serve starts; nothing
	// after.
	warned := "calltrail: warning: ../../tracefile/testdata/sample.trace: 2 calls were dropped while recording (buffers full); figures leave them out\n"
	if err := cmd.Wait(); err != nil || stderr.String() != warned {
		t.Errorf("interrupted: %v, %q; want exit 0 and nothing said but the dropped calls", err, stderr.String())
	}
}

// TestExportInterrupted: an export to a file that a signal ends leaves no
// file behind, the temporary one it was writing included, and calltrail
// dies of the signal. The trace comes from a pipe that sends nothing, so
// that the export is under way, its file begun, when the signal comes.
func TestExportInterrupted(t *testing.T) {
	bin := clitest.Binary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		dir := t.TempDir()
		cmd := exec.Command(bin, "export", "--format", "folded", "-o", filepath.Join(dir, "out.folded"), "/dev/stdin")
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			if names, _ := filepath.Glob(filepath.Join(dir, ".out.folded.tmp-*")); len(names) > 0 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("%v: no temporary file begun", sig)
			}
			time.Sleep(time.Millisecond)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		in.Close()
		var ee *exec.ExitError
		status, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !errors.As(err, &ee) || !status.Signaled() || status.Signal() != sig {
			t.Errorf("%v: %v, %q; want death by the signal", sig, err, stderr.String())
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%v: left %v behind", sig, entries)
		}
	}
}
