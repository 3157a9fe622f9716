// Package replay prints a trace as the call tree of each goroutine, in
// the indented view of the original functrace tool, with the calls of one
// goroutine together:
//
//	g[01]:	->main.A1
//	g[01]:		->main.B1
//	g[01]:		<-main.B1 1.25ms
//	g[01]:	<-main.A1 1.31ms
//
// Goroutines are printed in order of id. A call cut short by the end of
// the trace is marked "(unfinished)", one left by a panic "(panic)".
//
// So the calls of every goroutine are kept until the trace is read: 16
// bytes a call, of which 64 MiB in memory and the rest in a temporary
// file (in TMPDIR), read back as they are printed.
package replay
