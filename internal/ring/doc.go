// Package ring holds the buffers between a traced program and calltrail's
// writer: rings of event slots, written without locks and read by one
// goroutine. A ring's only writer, the goroutine pinned to the P the ring
// belongs to, takes slots with plain loads and stores (Take); a ring any
// goroutine writes takes them with a compare-and-swap (TakeShared), and
// can promise slots for later (Reserve). Each fails when the ring is full.
// The writer fills a slot's time and then publishes its word (Put). The reader takes runs of
// published slots from its tail (Readable, Run) and gives them back
// zeroed (Release).
package ring
