//go:build !race && !purego

package tracewrite

import "unsafe"

// encodeEvents is encodeRunGeneric's loop in assembly, over the n events
// at in, writing at out; gw is the goroutine's word, g<<RawOpBits. The
// compiler keeps too few of the loop's values in registers, and the loop
// is the trace writer's main cost: by hand it takes about two thirds of
// the instructions.
//
// The race detector does not see an assembly function's memory
// accesses, and would miss the order AppendRaw relies on: under it, and
// with the purego tag, encodeRun is encodeRunGeneric.
//
//go:noescape
func encodeEvents(out, in unsafe.Pointer, n int, last int64, gw uint64) (done, written int, t int64, exits uint64)

func encodeRun(buf []byte, o int, raw []Raw, last int64, g uint64) (n, end int, t int64, enters int) {
	if len(raw) == 0 || cap(buf)-o < len(raw)*6+8 {
		return 0, o, last, 0
	}
	n, w, t, exits := encodeEvents(unsafe.Add(unsafe.Pointer(unsafe.SliceData(buf)), o), unsafe.Pointer(unsafe.SliceData(raw)), len(raw), last, g<<RawOpBits)
	return n, o + w, t, n - int(exits)
}
