// Package wire holds the byte-level constants of calltrail's trace
// format, which docs/format.md describes: the chunk types, the event ops
// and the bounds a reader enforces. The reader (package tracefile) and
// the writer (package tracewrite) both take them from here, so that the
// format is written down once.
package wire
