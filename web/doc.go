// Package web serves calltrail's web UI: one page, its assets embedded
// in the binary, over a small JSON API on one trace held in memory (and
// optionally a base trace to compare it with).
//
// The views are an overview with the findings of package diagnose, a
// flame graph of exact call times, a function view (callers and callees,
// the errors it returned and the chains it failed through, every chain
// that reached the function, a histogram of its calls' durations), a
// timeline with one lane per goroutine, and the call tree of package
// replay with the command line's filters. Where a trace records the
// errors calls returned, the timeline and the call tree mark the calls
// that failed, and the flame graph can colour each box by the share of
// its calls that did. Where it records arguments and results (calltrail
// run --args), the timeline's call details and the call tree's rows show
// them, as calltrail replay does.
//
// Loading reads the file once and runs two passes over its bytes
// concurrently: the analysis of package analysis, and the timeline
// index, which keeps every call in compact per-goroutine arrays sorted by
// start so that a window of the timeline is a binary search away. Calls
// narrower than a pixel are merged into summary blocks on the server, so
// a response stays small whatever the trace's size.
//
// The server reads no file but the ones it was given: assets come from an
// embedded file system, and no part of a URL names a file.
package web
