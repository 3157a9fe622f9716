// Package diagnose turns an analysed trace into findings: a few plain
// sentences saying where the time went and what to look at, each with its
// evidence. The findings come from general rules over the figures, not
// from knowledge of any program:
//
//   - wait: a function that spends most of its time waiting, on what, and
//     for locks, which function held them;
//   - callee: CPU time a traced function spends in an untraced function it
//     calls (fmt.Errorf, reflect.Value.Call, log.Printf, regexp, a system
//     call), when that is a large share of all CPU time;
//   - self: a traced function whose own code takes a large share of the
//     CPU time, or, without a CPU profile, whose time outside traced
//     functions takes a large share of the goroutines' traced time (running or
//     blocked: the finding says it cannot tell);
//   - syscall: a function whose own time goes to system calls, on CPU in
//     the kernel and off CPU waiting for them (a file synced, a read of
//     one byte), which no block profile records;
//   - churn: many goroutines, each alive briefly and doing little work;
//   - errors: a function failing through one chain and never through
//     others, errors built and dropped in a hot loop, errors growing
//     over the run (see errorFindings);
//   - lost: calls dropped while recording, which every figure leaves out.
//
// The rules know the limits of their evidence: a CPU profile of fewer
// than five samples blames nothing, a preempted function is not said to
// call the scheduler, and a goroutine that waits once for the whole of
// its life, parked on purpose, ranks after the work.
package diagnose
