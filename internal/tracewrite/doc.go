// Package tracewrite encodes calltrail trace files: the runtime's
// background writer turns the raw events of its rings into events chunks
// with [Batch.AppendRaw] and writes them, with the tables and counters,
// through an [Encoder]. The flight recorder keeps chunks apart and scans
// them with [ScanEvents]. Package tracefile reads what it writes; the
// bytes of the format they share are in package wire.
//
// It uses the standard library only (and calltrail's own standard-library
// packages), because the runtime that traced programs import depends on
// it.
package tracewrite
