// Package analysis turns a trace into answers: where the time went, per
// function, and every chain of calls that reached a function.
//
// Analyze reads a trace as a stream into a Profile: per-function figures
// and a calling-context tree, whose nodes are the distinct chains of calls
// from a goroutine's first traced call, merged across goroutines. Memory
// grows with the number of functions and distinct chains, and with the
// depth of running calls, never with the number of calls.
package analysis
