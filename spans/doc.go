// Package spans ties the calls of a trace to the OpenTelemetry spans, and
// so the requests, they ran for.
//
// A program built with calltrail build, run or test that uses the
// OpenTelemetry SDK records every span it starts and ends (see the
// runtime's SpanStart). A call ran for the innermost span open on its
// goroutine when it began or, in a goroutine that had none open, for the
// span its goroutine was started under: the span of the parent's call
// that started it, by the rule package spawn applies to chains. That
// parent may have left the span by the time the goroutine runs, so Read
// makes a first pass over the trace to find each goroutine's span, and
// tracefile.Reader.InheritSpans gives it to the pass that reads the calls.
//
// Index.Keep makes the selection of --trace-id and --span, which every
// view applies through tracefile.Reader.KeepSpans; Index.Count fills in
// what each span's calls did, for calltrail spans and the web UI.
package spans
