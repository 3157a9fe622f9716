package calltrail

import (
	"testing"

	"github.com/calltrail/calltrail/tracefile"
)

// BenchmarkDrain measures the writer's cost per event: reading filled
// slots of one goroutine's calls and encoding them.
func BenchmarkDrain(b *testing.B) {
	const n = 1 << 16
	s := newShard(n)
	w := &writer{t: &tracer{}}
	var batch tracefile.Batch
	fill := func() {
		var ts int64 = 1000
		for i := uint64(0); i < n; i += 2 {
			c := Call(7<<fidBits | 3)
			pos, _ := s.reserve(1, 1)
			ts += 9
			s.slots[pos&s.mask].put(uint64(c)<<3|kEnter, ts)
			ts += 11
			s.claimOwed().put(uint64(c)<<3|kExit, ts)
		}
	}
	b.ResetTimer()
	for done := 0; done < b.N; done += n {
		b.StopTimer()
		fill()
		batch = tracefile.Batch{}
		b.StartTimer()
		w.drainShard(&s, &batch, 0)
	}
	b.ReportMetric(float64(batch.Size())/float64(n), "B/event")
}
