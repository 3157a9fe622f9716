//go:build unix

package calltrail

import (
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// handleSignals completes the trace file when SIGINT or SIGTERM arrives,
// then lets the signal have its usual effect: the handler is removed and
// the signal raised again, so the program dies of it as it would have,
// unless the program handles the signal itself, in which case it goes on
// and so does tracing.
//
// It does the same for SIGPIPE where it can tell a broken standard output
// or error from a broken connection (see brokenStd): a command whose
// reader left (prog | head -1) ends its trace "signal: broken pipe" and
// dies of SIGPIPE, as it would untraced. A SIGPIPE for a connection is
// left alone: the write fails with EPIPE, as it would untraced.
func handleSignals(t *tracer) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	var pipe chan os.Signal // nil: never ready
	if canSeeBrokenPipes && (maybePipe(stdout) || maybePipe(stderr)) {
		pipe = make(chan os.Signal, 1)
		signal.Notify(pipe, syscall.SIGPIPE)
		pipeMu.Lock()
		pipeSignals = pipe
		pipeMu.Unlock()
	}
	go func() {
		for {
			select {
			case sig := <-ch:
				t.w.request("signal: "+sig.String(), false)
				signal.Stop(ch)
				syscall.Kill(syscall.Getpid(), sig.(syscall.Signal))
				// The program handles the signal and goes on: a broken
				// output is still to be watched for.
				if ch = nil; pipe == nil {
					return
				}
			case <-pipe:
				if f := brokenStd(); f != nil {
					piped.Store(true)
					t.w.request(pipeEnd, false)
					dieOfPipe(f)
					return
				}
			}
		}
	}()
}

// pipeEnd is how a trace ends whose program died writing to a standard
// output or error that no one reads any more.
const pipeEnd = "signal: broken pipe"

var (
	// stdout and stderr are the program's standard output and error as
	// it started, whatever it assigns to os.Stdout and os.Stderr later.
	stdout, stderr = os.Stdout, os.Stderr
	// pipeSignals receives SIGPIPE, when handleSignals asked for it: the
	// last tracer's, for a program that stops tracing and starts again.
	pipeSignals chan os.Signal
	pipeMu      sync.Mutex
	// piped is set once a SIGPIPE came for a broken standard output or
	// error.
	piped atomic.Bool
)

// maybePipe says whether writing to f may raise SIGPIPE: whether it is a
// pipe or a socket.
func maybePipe(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}

// brokenStd returns the program's standard output or error if no one
// reads it any more, or nil.
func brokenStd() *os.File {
	for _, f := range []*os.File{stdout, stderr} {
		if brokenPipe(int(f.Fd())) {
			return f
		}
	}
	return nil
}

// pipedAtEnd says, as the program ends by returning from main or by
// os.Exit, whether it does so after a SIGPIPE for a broken standard output
// or error: untraced, it would have died of it at the write. The program
// saw the write fail (with SIGPIPE asked for, the runtime returns EPIPE
// rather than kill it) and went on to its end before handleSignals could
// act; the end then says so, and dieOfPipe follows the trace.
func pipedAtEnd() *os.File {
	pipeMu.Lock()
	pipe := pipeSignals
	pipeMu.Unlock()
	if pipe == nil {
		return nil
	}
	f := brokenStd()
	if f == nil {
		return nil
	}
	if !piped.Load() {
		// The SIGPIPE of a write that just failed may still be on its
		// way to pipeSignals; or the output broke after the last write,
		// and there is none.
		t := time.NewTimer(pipeLag)
		defer t.Stop()
		select {
		case <-pipe:
		case <-t.C:
			if !piped.Load() {
				return nil
			}
		}
	}
	piped.Store(true)
	return f
}

// pipeLag bounds the wait for a SIGPIPE at the program's end, when its
// standard output or error is broken.
const pipeLag = 100 * time.Millisecond

// dieOfPipe makes the program die of SIGPIPE as the Go runtime kills it
// untraced: SIGPIPE is no longer asked for, and a write to the broken
// standard output or error f raises it. A program that asked for SIGPIPE
// itself gets the write's EPIPE and its signal, and goes on.
func dieOfPipe(f *os.File) {
	pipeMu.Lock()
	signal.Stop(pipeSignals)
	pipeMu.Unlock()
	f.Write([]byte{'\n'})
}
