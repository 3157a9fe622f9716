//go:build amd64 && !race

package ring

// publish stores v to *p after the stores that precede it. On amd64 every
// store has release order (TSO) and the Go compiler keeps stores in
// program order, so a plain store suffices. An atomic store would be an
// XCHG: a full barrier that waits for the cycle counter read before it and
// costs a few nanoseconds per event. The race detector cannot know this,
// so race builds use publish_other.go.
func publish(p *uint64, v uint64) { *p = v }
