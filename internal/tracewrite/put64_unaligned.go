//go:build 386 || amd64 || arm64 || ppc64le

package tracewrite

import "unsafe"

// put64 stores x little-endian at p, which need not be aligned, in one
// store on the architectures where that is cheap and the byte order is
// little-endian. The compiler does not always merge PutUint64's byte
// stores: when it can prove some of x's bytes zero it stores them apart,
// and encodeRun then pays four stores an event instead of one.
func put64(p unsafe.Pointer, x uint64) { *(*uint64)(p) = x }
