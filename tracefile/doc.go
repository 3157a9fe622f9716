// Package tracefile reads calltrail trace files, and holds the types a
// trace is made of.
//
// A trace is a header followed by self-contained, checksummed chunks,
// documented in docs/format.md at the root of the repository; the
// calltrail runtime writes them (with calltrail's internal writer), and
// every tool reads them with [Reader]. The reader streams: memory grows
// with the number of functions and with the call depth of live
// goroutines, never with the number of calls. A file cut short reads up
// to its last whole chunk and then reports [ErrTruncated]; any other
// damage is reported as an error wrapping [ErrCorrupt].
//
// This package uses the standard library only, because the runtime that
// traced programs import depends on it.
package tracefile
