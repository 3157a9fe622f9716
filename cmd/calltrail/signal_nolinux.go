//go:build !linux

package main

import "syscall"

// dieWithParent has nothing to ask of systems without a parent-death
// signal: there a command calltrail started outlives a calltrail killed
// by SIGKILL.
func dieWithParent() *syscall.SysProcAttr { return nil }
