package calltrail

import (
	"io"
	"os"
	"sync"
	"testing"
)

func TestMain(m *testing.M) {
	// init traced this test binary into calltrail.out in the package
	// directory; tests make their own tracers instead.
	if Enabled && tr != nil {
		Stop()
		if os.Getenv("CALLTRAIL_OUT") == "" {
			os.Remove("calltrail.out")
		}
	}
	os.Exit(m.Run())
}

// useTracer makes a fresh tracer writing to path the program's tracer
// until the returned function stops it.
func useTracer(tb testing.TB, path string, o options) (stop func()) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	return useTracerOn(tb, f, o)
}

// useTracerOn is useTracer writing to out.
func useTracerOn(tb testing.TB, out io.WriteCloser, o options) (stop func()) {
	tb.Helper()
	if o.every == 0 {
		o.every = 100e6
	}
	if o.buffer == 0 {
		o.buffer = defaultBuffer
	}
	t, err := newTracer(o, out, nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	old := tr
	use(t)
	benchFuncs[0].id.Store(0)
	sites = sync.Map{}
	recording.Store(true)
	return func() {
		Stop()
		use(old)
		sites = sync.Map{}
	}
}
