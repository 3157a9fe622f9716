//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
