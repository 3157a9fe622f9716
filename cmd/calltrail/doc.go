// Command calltrail records every function call of a Go program and
// answers questions about the trace: which chain of calls led to a
// function, in which goroutine, and where the time went.
//
// Usage:
//
//	calltrail run [flags] PKG [ARGS]     build and run a program, every function traced
//	calltrail build [flags] [PKG]        build a traced program
//	calltrail test [flags] [PKGS]        run tests, traced, one trace per test binary
//	calltrail instrument [flags] PATH... put the guard into source files, or take it out
//	calltrail replay [flags] [FILE]      print the call tree of each goroutine
//	calltrail info [FILE]                describe a trace
//
// FILE defaults to calltrail.out. Run "calltrail help VERB" for a verb's
// flags.
package main
