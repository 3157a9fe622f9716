//go:build !unix

package calltrail

import "os"

// handleSignals does nothing where signals cannot be raised again after
// handling them; the trace is then readable up to the last periodic write.
func handleSignals(*tracer) {}

// pipeEnd is how a trace ends whose program died writing to a standard
// output or error that no one reads any more: not seen here.
const pipeEnd = "signal: broken pipe"

func pipedAtEnd() *os.File { return nil }

func dieOfPipe(*os.File) {}
