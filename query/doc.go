// Package query answers the questions calltrail's command line and its
// web UI ask of an analysed trace: the overview, the functions, one
// function's figures with its callers, callees, chains and histogram,
// every chain of calls that reached a function, the goroutines, the flame
// graphs, and what changed from another trace.
//
// Both ask the same functions and get the same types back, as pprof's
// driver serves its command line and its web UI: calltrail --json and the
// web API marshal them as they are. Their JSON is in one style: names in
// snake_case, times in nanoseconds with names ending in _ns.
//
// Recursion is folded wherever chains are shown: a chain never names a
// function twice, and re-entering one is counted instead (main.rec ×30000),
// so that every answer is linear in the depth of the calls.
package query
