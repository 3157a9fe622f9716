package childproc

import (
	"os/exec"
	"syscall"
)

// DieWithParent makes cmd, not yet started, killed when the process that
// starts it ends, however it ends.
//
// Linux sends the signal when the thread that started cmd ends, not the
// process; the Go runtime ends a thread only under a goroutine that
// locked it and returned, which the callers do not do.
func DieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
