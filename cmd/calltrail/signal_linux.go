package main

import "syscall"

// dieWithParent makes a command calltrail starts receive SIGKILL when
// calltrail ends, however it ends.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
