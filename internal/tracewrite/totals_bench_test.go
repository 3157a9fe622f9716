package tracewrite

import (
	"math/rand"
	"testing"

	"github.com/calltrail/calltrail/tracefile"
)

// BenchmarkCountRaw measures what counting for the summary chunk adds to
// the writer per event, beside BenchmarkDrain's whole cost: enters and
// exits of 50 functions in an order no branch predictor learns.
func BenchmarkCountRaw(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	raw := make([]Raw, 256)
	depth := 0
	for i := range raw {
		if depth == 0 || rng.Intn(2) == 0 {
			raw[i] = Raw{RawEnter(7, uint32(1+rng.Intn(50))), int64(i * 10)}
			depth++
		} else {
			raw[i] = Raw{RawExit(7, tracefile.Return), int64(i * 10)}
			depth--
		}
	}
	var t Totals
	b.ResetTimer()
	for i := 0; i < b.N; i += len(raw) {
		t.CountRaw(raw)
	}
}
