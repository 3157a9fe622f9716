package records

import (
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// The ids print as encoding/hex would print them.
func TestIDStrings(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		var tr TraceID
		var sp SpanID
		for i := range tr {
			tr[i] = byte(r.Uint32())
		}
		for i := range sp {
			sp[i] = byte(r.Uint32())
		}
		if got, want := tr.String(), hex.EncodeToString(tr[:]); got != want {
			t.Fatalf("TraceID %v: %q, want %q", tr[:], got, want)
		}
		if got, want := sp.String(), hex.EncodeToString(sp[:]); got != want {
			t.Fatalf("SpanID %v: %q, want %q", sp[:], got, want)
		}
	}
}
