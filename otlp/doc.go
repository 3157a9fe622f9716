// Package otlp turns the calls of a trace worth a span into OpenTelemetry
// spans, and sends them to an OTLP receiver such as the OpenTelemetry
// Collector, Jaeger or Tempo.
//
// A program makes millions of calls a second; a span store takes
// thousands. So only the calls Options chooses become spans: those of
// functions matching a regular expression, those slower than a
// threshold, and those that failed. Spans nest as the calls nest: a
// span's parent is its call's innermost caller that is a span too. A
// goroutine's outermost spans carry a link to the span of the goroutine
// that started it, the innermost one running when the new goroutine made
// its first call, and belong to that span's trace; other outermost spans
// each start a trace of their own. Ids are derived from the trace file,
// so exporting the same file twice gives the same spans.
package otlp
