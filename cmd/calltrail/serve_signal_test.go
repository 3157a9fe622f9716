//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeInterrupted: an interrupt is how serve is meant to be stopped,
// so it ends well: exit 0, nothing said.
func TestServeInterrupted(t *testing.T) {
	bin := calltrailBinary(t)
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
	if err := cmd.Wait(); err != nil || stderr.Len() > 0 {
		t.Errorf("interrupted: %v, %q; want exit 0 and nothing said", err, stderr.String())
	}
}
