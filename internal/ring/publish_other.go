//go:build !amd64 || race

package ring

import "sync/atomic"

// publish stores v to *p after the stores that precede it.
func publish(p *uint64, v uint64) { atomic.StoreUint64(p, v) }

// loadState and storeState read and write a ring's state for its only
// writer (Take), with the order a reader needs.
func loadState(p *atomic.Uint64) uint64 { return p.Load() }

func storeState(p *atomic.Uint64, v uint64) { p.Store(v) }
