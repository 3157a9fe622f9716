// Package calltrail is the runtime of calltrail, a function-call tracer
// for Go: the code that runs inside a traced program and records every
// enter and exit of its traced functions, with goroutine and nanosecond
// time, into a trace file.
//
// Functions are traced by the one-line guard that "calltrail instrument"
// and "calltrail build|run|test" insert,
//
//	if calltrail.Enabled { if c := calltrail.Enter(&f); c != 0 { defer calltrail.Exit(c) } }
//
// or by hand with
//
//	defer calltrail.Trace()()
//
// Nothing is recorded unless the program is built with the calltrail build
// tag: without it Enabled is a false constant and the guard compiles to
// nothing at all. With the tag, tracing starts when the package is
// initialised and is configured by the environment: CALLTRAIL=off turns it
// off (and leaves starting it to Start), CALLTRAIL_OUT names the trace file (calltrail.out), CALLTRAIL_TEXT
// prints the calls live, CALLTRAIL_BUFFER bounds the memory for events
// (32MiB), CALLTRAIL_FLUSH sets how often the file is written (100ms).
//
// The runtime uses the standard library only. Its hot path takes no lock
// and never allocates: events go into a ring per P, written without an
// atomic read-modify-write, and a background goroutine puts each
// goroutine's events back in order and writes them out. When a ring is
// full, the goroutine waits for the writer, and the wait is counted; with
// CALLTRAIL_FULL=drop, whole calls are dropped instead, counted, and the
// count written to the file. The trace is complete when main.main returns, when a panic ends
// the program, and on SIGINT or SIGTERM; see Stop for os.Exit.
//
// # What programs call
//
// [Start] traces the program to a writer with [Options], as the
// environment does to a file, and a [FlightRecorder] keeps its last calls
// in memory to write when asked; [Trace] traces a function by hand; [Stop]
// ends tracing and completes the trace (before os.Exit), [Flush] writes
// what is buffered, [Pause] and [Resume] switch recording off and on.
// With the flight recorder the environment started, [Snapshot] and
// [SnapshotLast] write its window, [Capture] and [CaptureContext] the
// calls of the next moments; [ReadCounters] gives the running totals.
// Package live serves all of this over HTTP.
//
// # What generated code calls
//
// The guards and the code calltrail's build adds call the rest, and
// programs need not: [Enabled], [Func], [Enter], [Call], [Exit],
// [ExitErr], [Arg], [Result], [Coverage], and [Source] for the calltrail
// command itself.
//
// Package tracefile reads trace files; the calltrail command analyses them.
package calltrail
