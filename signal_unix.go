//go:build unix

package calltrail

import (
	"os"
	"os/signal"
	"syscall"
)

// handleSignals completes the trace file when SIGINT or SIGTERM arrives,
// then lets the signal have its usual effect: the handler is removed and
// the signal raised again, so the program dies of it as it would have,
// unless the program handles the signal itself, in which case it goes on
// and so does tracing.
func handleSignals(t *tracer) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-ch
		t.w.request("signal: "+sig.String(), false)
		signal.Stop(ch)
		syscall.Kill(syscall.Getpid(), sig.(syscall.Signal))
	}()
}
