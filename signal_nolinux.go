//go:build unix && !linux

package calltrail

// canSeeBrokenPipes says brokenPipe can tell a pipe that no one reads:
// not here, so SIGPIPE is left to the runtime, which kills the program
// before its trace is complete.
const canSeeBrokenPipes = false

func brokenPipe(int) bool { return false }
