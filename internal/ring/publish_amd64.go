//go:build amd64 && !race

package ring

import (
	"sync/atomic"
	"unsafe"
)

// publish stores v to *p after the stores that precede it. On amd64 every
// store has release order (TSO) and the Go compiler keeps stores in
// program order, so a plain store suffices. An atomic store would be an
// XCHG: a full barrier that waits for the cycle counter read before it and
// costs a few nanoseconds per event. The race detector cannot know this,
// so race builds use publish_other.go.
func publish(p *uint64, v uint64) { *p = v }

// loadState and storeState read and write a ring's state for its only
// writer (Take): the reader loads it atomically, which on amd64 is a
// plain load, and a plain store keeps all the order the reader needs.
func loadState(p *atomic.Uint64) uint64 { return *(*uint64)(unsafe.Pointer(p)) }

func storeState(p *atomic.Uint64, v uint64) { *(*uint64)(unsafe.Pointer(p)) = v }
