//go:build !unix

package main

import (
	"os"
	"syscall"
)

// reraise does nothing where a process cannot signal itself; calltrail
// then ends with the program's exit status.
func reraise(syscall.Signal) {}

// endSignals are the signals that end calltrail, which it cleans up
// after first (see files).
var endSignals = []os.Signal{os.Interrupt}
