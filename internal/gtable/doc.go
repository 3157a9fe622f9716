// Package gtable holds a value per goroutine id, for readers of traces
// of millions of goroutines.
//
// The Go runtime hands out goroutine ids in order, so the ids of a trace
// are dense: a Table keeps them in pages of consecutive ids, found
// through a small map of pages, and costs the size of its values and a
// bit per id, not a hash map's slot, and not its cache miss on every
// access. Ids too far apart to share pages (a crafted trace, or a few
// goroutines of a long run) go to a plain map instead, so that no input
// makes a Table hold more than about twice its values.
package gtable
