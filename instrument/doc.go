// Package instrument puts calltrail's guard at the top of every function of
// Go source files, and takes it out again.
//
// Like Go's cmd/cover, it makes one pass over the syntax tree and inserts
// text at byte offsets, so the file keeps its formatting, comments, build
// constraints and line numbers: a panic or a compiler error in instrumented
// code points at the line it would point at in the original. Everything it
// adds stays on lines that already exist, except one line appended at the
// end of the file:
//
//	package main; import __ct "github.com/calltrail/calltrail"
//	...
//	func A1() { if __ct.Enabled { if c := __ct.Enter(&__ctf_1a2b3c4d[0]); c != 0 { defer __ct.Exit(c) } };
//	...
//	var __ctf_1a2b3c4d = [...]__ct.Func{{Name: "main.A1", File: "main.go", Line: 12}}
//
// Undo removes exactly those three kinds of text, so that undoing gives back
// the original bytes. Instrumenting an instrumented file undoes it first,
// so instrumenting twice equals instrumenting once.
//
// The package is the rewriter alone: source bytes in, source bytes out,
// no go command, no files. Package internal/gobuild runs the go command
// over instrumented copies.
package instrument
