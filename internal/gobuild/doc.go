// Package gobuild runs the go command over instrumented source: it is
// the orchestration around package instrument's rewriter, written once
// for calltrail build, run and test and for calltrail instrument.
//
// SourceFiles lists the files of the packages a pattern names, refusing
// those of the Go distribution and of the module cache. KeepInlined asks
// the compiler which functions to leave untraced so that they stay
// inlined: those whose inlining keeps a value off the heap; InlinedIn
// asks it of files instrumented in place, from their original text. A
// program that calls ServeReportCompile first serves as the compiler's
// wrapper for it, which ends each compile with its front end.
// Build prepares a traced build of packages, the user's files untouched:
// instrumented copies through an overlay, each package's coverage (what
// was traced, and why the rest was not) in its copy, the runtime through
// a copy of go.mod, and, for packages of the standard library, a package
// of the runtime added to it.
package gobuild
