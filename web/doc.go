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
// Where the program recorded OpenTelemetry spans, the Requests view lists
// them slowest first, as calltrail spans does (/api/requests), and shows
// the calls of the request chosen, in every goroutine it used: its
// timeline and call tree, its failed calls (/api/failed), and where its
// time went, on and off CPU where the trace has a CPU profile. Every view
// takes the command line's trace-id and span filters as parameters, and
// shows the calls --trace-id and --span give: the timeline and the call
// tree from the timeline index narrowed to them, the overview, the flame
// graph and the function view from an analysis of a reader told the
// spans to keep, as the command line's is.
//
// Loading reads the file once and runs two passes over its bytes
// concurrently: the analysis of package analysis, and the timeline
// index, which keeps every call in compact per-goroutine arrays sorted by
// start so that a window of the timeline is a binary search away, with
// the span each ran under. Calls narrower than a pixel are merged into
// summary blocks on the server, so a response stays small whatever the
// trace's size. A trace with spans, as the index finds, is read twice more
// by package spans: for the span each goroutine was started under, which
// its calls outside spans of their own inherit, and for what each span's
// calls did. Its bytes are kept for the analyses of requests, made when a
// view first asks, a few of them kept.
//
// The server reads no file but the ones it was given: assets come from an
// embedded file system, and no part of a URL names a file.
package web
