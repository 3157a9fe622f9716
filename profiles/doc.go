// Package profiles links the Go runtime's profiles into a traced program:
// with it, CALLTRAIL_PROFILES ("cpu,mutex,block") adds them to the trace,
// for the on-CPU and off-CPU flame graphs and for what calls waited on,
// and a capture (calltrail record --cpu, or calltrail.Capture) can
// take the CPU profile.
//
// calltrail run and test link it into every program they trace (unless
// --profiles none), calltrail build when --profiles names the profiles,
// which the program then records unless CALLTRAIL_PROFILES says
// otherwise. A program instrumented in its source (calltrail instrument)
// and built with -tags calltrail imports it for the profiles, as a
// program imports net/http/pprof:
//
//	import _ "github.com/calltrail/calltrail/profiles"
//
// Without the calltrail tag it is empty. A traced program asked for
// profiles without it says so on its standard error, and its trace has
// none.
//
// It is a package of its own so that calltrail's runtime does not import
// runtime/pprof: a traced build that records no profiles does not compile
// runtime/pprof, and one that does compiles it beside the program's
// packages rather than before all of them.
package profiles
