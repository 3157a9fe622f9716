//go:build !unix

package main

import "syscall"

// reraise does nothing where a process cannot signal itself; calltrail
// then ends with the program's exit status.
func reraise(syscall.Signal) {}
