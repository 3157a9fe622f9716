// Package query answers the questions calltrail's command line and its
// web UI ask of an analysed trace: the overview, the functions, one
// function's figures with its callers, callees, chains and histogram,
// every chain of calls that reached a function, the goroutines, the flame
// graphs, and what changed from another trace.
//
// They ask a Source, opened once: a trace file (File) or the calls of a
// store a selection chooses (store.Source), two implementations of one
// interface, so that a view has one code path for both. Every answer,
// the flame graph's errors and the overview's included, is computed
// here, from the model, analysis.Profile.
//
// Both ask the same functions and get the same types back, as pprof's
// driver serves its command line and its web UI: calltrail --json and the
// web API marshal them as they are. Their JSON is in one style: names in
// snake_case, times in nanoseconds with names ending in _ns.
//
// Recursion is folded wherever chains are shown, findings included: a
// run of the same steps is written once with how many times it ran
// (main.rec ×30000, (main.even -> main.odd) ×2), so that every answer is
// linear in the depth of the calls.
package query
