//go:build !amd64 || race

package ring

import "sync/atomic"

// publish stores v to *p after the stores that precede it.
func publish(p *uint64, v uint64) { atomic.StoreUint64(p, v) }
