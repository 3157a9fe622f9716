//go:build calltrail

package calltrail

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/calltrail/calltrail/internal/gstate"
)

// TestAsmHotPath checks the assembly hot path against the Go one: the same
// calls give the same trace, and the assembly finishes the common case
// itself, handing Go little more than a goroutine's first call and the
// exit of it.
func TestAsmHotPath(t *testing.T) {
	if !Enabled {
		t.Skip("the hot path needs the calltrail tag")
	}
	if !asmHotPath {
		t.Skip("no assembly hot path on " + runtime.GOARCH + " or under the race detector")
	}
	if g, want := gInR14(), gstate.G(); g != want {
		t.Fatalf("R14 holds %#x, not the g at %#x: every call takes the Go path", g, want)
	}
	setup()
	if hot.pOff == 0 {
		t.Skip("the runtime's offsets or the cycle counter are not known here: every call takes the Go path")
	}
	const trees = 1000
	work := func(g *uint64) func() {
		return func() {
			*g = gstate.Goid()
			call(&funcs[8], func() { // the goroutine's first call, and its exit, take the Go path
				for i := 0; i < trees; i++ {
					tree()
				}
			})
		}
	}
	var slow atomic.Int64
	slowHook = func() { slow.Add(1) }
	var ga, gg uint64
	asm := record(t, options{}, work(&ga))
	slowHook = nil
	n := slow.Load()

	defer setHot()
	hot = hotState{}
	goPath := record(t, options{}, work(&gg))

	a, g := strings.Join(asm.calls[ga], " "), strings.Join(goPath.calls[gg], " ")
	if a != g {
		t.Errorf("the assembly's trace differs from Go's:\nasm %.200s\ngo  %.200s", a, g)
	}
	if want := 2 + 2*4*trees; len(asm.calls[ga]) != want {
		t.Errorf("%d events, want %d", len(asm.calls[ga]), want)
	}
	// Two for the first call; a few more where the goroutine moved to
	// another P and had to claim its ring.
	if n < 2 || n > 50 {
		t.Errorf("the assembly handed Go %d of %d events, want 2 to 50", n, 2+2*4*trees)
	}
}
