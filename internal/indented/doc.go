// Package indented formats calls in the indented view of the original
// functrace tool, which both the runtime's live output and
// "calltrail replay" print:
//
//	g[01]:	->main.A1
//	g[01]:		->main.B1
//	g[01]:		<-main.B1 1.25ms
//	g[01]:	<-main.A1 1.31ms
//
// Calls nested deeper than MaxIndent levels are indented MaxIndent tabs
// and say their depth, g[01]:<64 tabs>[30000]->main.rec, so that a deep
// recursion's lines stay short.
//
// It uses the standard library only, because the runtime depends on it.
package indented
