package web

import (
	"math"
	"sort"
)

// histogram counts the calls of function id in log-spaced buckets of
// duration between lo and hi, each with its slowest calls. It scans the
// timeline index: tens of milliseconds for ten million calls.
func (t *Trace) histogram(id uint32, lo, hi int64) []bucketJSON {
	lo = max(lo, 1)
	hi = max(hi, lo+1)
	ratio := math.Log(float64(hi+1) / float64(lo))
	bs := make([]bucketJSON, histBuckets)
	var bounds [histBuckets]int64 // upper bounds, exclusive
	for i := range bs {
		bs[i].Lo = int64(float64(lo) * math.Exp(ratio*float64(i)/histBuckets))
		bs[i].Hi = int64(float64(lo) * math.Exp(ratio*float64(i+1)/histBuckets))
		bs[i].Calls = []callJSON{}
		bounds[i] = bs[i].Hi
	}
	bounds[histBuckets-1] = math.MaxInt64
	fastest := make([]int, histBuckets) // index of the fastest call kept, once a bucket is full
	for _, l := range t.ix.lanes {
		for i, fn := range l.fn {
			if fn != id {
				continue
			}
			d := l.dur[i]
			k := sort.Search(histBuckets, func(k int) bool { return d < bounds[k] })
			b := &bs[k]
			b.Count++
			if len(b.Calls) == bucketCalls && d <= b.Calls[fastest[k]].Dur {
				continue
			}
			c := callJSON{l.g, l.start[i], d, exitName(l.exit[i])}
			if len(b.Calls) < bucketCalls {
				b.Calls = append(b.Calls, c)
			} else {
				b.Calls[fastest[k]] = c
			}
			if len(b.Calls) == bucketCalls {
				f := 0
				for j := range b.Calls {
					if b.Calls[j].Dur < b.Calls[f].Dur {
						f = j
					}
				}
				fastest[k] = f
			}
		}
	}
	for i := range bs {
		sort.Slice(bs[i].Calls, func(a, b int) bool { return bs[i].Calls[a].Dur > bs[i].Calls[b].Dur })
	}
	return bs
}
