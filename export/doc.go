// Package export writes a trace in the formats other tools read: pprof's
// profile.proto, folded stacks for flamegraph.pl, speedscope's evented
// JSON, and Chrome's Trace Event JSON for chrome://tracing and Perfetto.
//
// pprof and folded stacks are built from the analysis model (time per
// chain of calls); speedscope and Chrome need the calls themselves, in
// time order, and read the trace again.
package export
