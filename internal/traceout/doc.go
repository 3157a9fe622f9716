// Package traceout says how a traced program takes the path it writes its
// trace to (CALLTRAIL_OUT): for the runtime, which writes it, and for the
// calltrail command, which names it for run and test and reads it back.
package traceout
