// Package originals keeps the original of each file calltrail instrument
// -w changes, in the user's cache directory, by the file's absolute
// path: --undo gives it back whole when what is left after taking the
// instrumentation out is the same source but for formatting (a formatter
// ran over the instrumented file), so that one-line functions the
// formatter spread over lines come back as they were.
package originals
