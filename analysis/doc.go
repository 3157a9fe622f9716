// Package analysis turns a trace into answers: where the time went, per
// function. It reads a trace as a stream, so its memory grows with the
// number of functions and the depth of running calls, not with the
// number of calls.
package analysis
