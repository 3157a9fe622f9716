// Package ring holds the buffers between a traced program and calltrail's
// writer: rings of event slots, written by any number of goroutines
// without locks and read by one. A goroutine claims slots with one atomic
// add (Claim), or, where it must never wait, reserves them with a
// compare-and-swap that fails when the ring is full (Reserve); it fills a
// slot's time and then publishes its word (Put). The reader takes runs of
// published slots from its tail (Readable, Run) and gives them back
// zeroed (Release).
package ring
