//go:build !linux

package childproc

import "os/exec"

// DieWithParent does nothing here: the system cannot tie a child's end to
// its parent's.
func DieWithParent(cmd *exec.Cmd) {}
