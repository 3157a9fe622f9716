package analysis

import (
	"math"
	"math/bits"
)

// histogram counts durations in log-linear buckets: 16 per power of two,
// so a bucket's bounds are within 1/16 of each other.
type histogram struct {
	counts []uint32 // by bucket, up to the largest bucket seen
}

const subBits = 4

func bucket(d int64) uint16 {
	if d < 1<<subBits {
		return uint16(max(d, 0))
	}
	e := bits.Len64(uint64(d)) - 1 - subBits // shift keeping subBits+1 bits
	return uint16((e+1)<<subBits) | uint16(d>>e)&(1<<subBits-1)
}

// lower returns the smallest duration of bucket b.
func lower(b uint16) int64 {
	if b < 1<<subBits {
		return int64(b)
	}
	e := int(b>>subBits) - 1
	return (1<<subBits | int64(b)&(1<<subBits-1)) << e
}

func (h *histogram) add(d int64) {
	b := int(bucket(d))
	if b >= len(h.counts) {
		h.counts = append(h.counts, make([]uint32, b+1-len(h.counts))...)
	}
	h.counts[b]++
}

// quantile returns the lower bound of the bucket holding the q'th of n
// counted durations, by nearest rank: the ceil(q*n)'th smallest.
func (h *histogram) quantile(q float64, n uint64) int64 {
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n))) // nearest rank
	rank = min(max(rank, 1), n)
	var seen uint64
	for b, c := range h.counts {
		seen += uint64(c)
		if seen >= rank {
			return lower(uint16(b))
		}
	}
	return lower(uint16(len(h.counts) - 1))
}

// Bucket is a range of call durations, [Lo, Hi), and how many calls fell
// in it.
type Bucket struct {
	Lo, Hi int64
	Count  uint64
}

// Buckets returns the buckets of f's call durations that Quantile reads,
// from the fastest call's to the slowest's, empty ones between included:
// bars drawn from them agree with the quantiles.
func (f *Func) Buckets() []Bucket {
	var out []Bucket
	for b, c := range f.hist.counts {
		if c == 0 && len(out) == 0 {
			continue
		}
		out = append(out, Bucket{Lo: lower(uint16(b)), Hi: lower(uint16(b + 1)), Count: uint64(c)})
	}
	return out
}
