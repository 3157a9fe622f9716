//go:build unix

package main

import (
	"os"
	"syscall"
	"time"
)

// reraise ends calltrail with the signal that ended the program it ran,
// for the signals whose default the Go runtime keeps: to die of them.
// Others (SIGSEGV, SIGABRT, SIGQUIT) the runtime would ignore, or turn
// into a traceback of calltrail itself; calltrail then ends with the
// shell's status for them, 128 plus the signal's number.
func reraise(sig syscall.Signal) {
	switch sig {
	case syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL:
		syscall.Kill(os.Getpid(), sig)
		// The signal may be handled on another thread: give it time
		// rather than exit first.
		time.Sleep(time.Second)
	}
}

// endSignals are the signals that end calltrail, which it cleans up
// after first (see files).
var endSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}
