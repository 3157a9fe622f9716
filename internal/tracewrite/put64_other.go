//go:build !(386 || amd64 || arm64 || ppc64le)

package tracewrite

import (
	"encoding/binary"
	"unsafe"
)

// put64 stores x little-endian at p, which need not be aligned.
func put64(p unsafe.Pointer, x uint64) { binary.LittleEndian.PutUint64((*[8]byte)(p)[:], x) }
