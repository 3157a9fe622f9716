//go:build linux

package childproc

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDieWithParent starts this test binary as a parent that starts a
// child sleeping a minute and then dies as go test's timeout makes a
// test binary die, of a panic: the child is gone soon after.
func TestDieWithParent(t *testing.T) {
	if os.Getenv("CHILDPROC_PARENT") != "" {
		cmd := exec.Command("sleep", "60")
		DieWithParent(cmd)
		if err := cmd.Start(); err != nil {
			fmt.Println("start:", err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		panic("test timed out")
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestDieWithParent$")
	parent.Env = append(os.Environ(), "CHILDPROC_PARENT=1")
	out, _ := parent.Output()
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0]))
	if err != nil {
		t.Fatalf("the parent printed no child: %q", out)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		// Signal 0 tells whether the process is there; a zombie, not
		// reaped by init yet, has ended too.
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if syscall.Kill(pid, 0) != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the child %d still ran 10s after its parent died", pid)
		}
	}
}
