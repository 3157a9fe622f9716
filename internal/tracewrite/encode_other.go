//go:build !amd64 || race || purego

package tracewrite

func encodeRun(buf []byte, o int, raw []Raw, last int64, g uint64) (n, end int, t int64, enters int) {
	return encodeRunGeneric(buf, o, raw, last, g)
}
