// Package tracefile reads and writes calltrail trace files.
//
// It is the only package that knows the bytes of the format, in both
// directions: the calltrail runtime encodes with [Encoder] and [Batch], and
// every tool decodes with [Reader]. The format is documented in
// docs/format.md at the root of the repository.
//
// A trace is a header followed by self-contained, checksummed chunks. The
// reader streams: memory grows with the number of functions and with the
// call depth of live goroutines, never with the number of calls. A file cut
// short reads up to its last whole chunk and then reports
// [ErrTruncated]; any other damage is reported as an error wrapping
// [ErrCorrupt].
//
// This package uses the standard library only, because the runtime that
// traced programs import depends on it.
package tracefile
