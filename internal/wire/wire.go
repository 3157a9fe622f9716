package wire

import "hash/crc32"

// Magic opens every trace file.
const Magic = "calltrail trace\n"

// Version is the format version the runtime writes and the newest the
// reader reads; it follows Magic as a uvarint.
const Version = 1

// Chunk types. Each chunk is: type byte, uvarint payload length, payload,
// CRC-32C of the type byte and payload (4 bytes, little endian).
const (
	ChunkMeta   = 'M' // key/value strings describing the program
	ChunkFuncs  = 'F' // function table entries
	ChunkClock  = 'C' // clock calibration point
	ChunkEvents = 'E' // events of one shard
	ChunkStats  = 'S' // cumulative counters
	ChunkEnd    = 'Z' // tracing ended; the reason
	ChunkPprof  = 'P' // a profile of the Go runtime, gzipped profile.proto
	ChunkErrors = 'R' // error table entries: the errors calls returned
	// what the build traced of a package, and what it left out and why
	ChunkCoverage = 'V'
	// the totals of the whole trace, after its end chunk: its payload
	// ends with its length as two bytes, little endian
	ChunkSummary = 'I'
	// span table entries: the OpenTelemetry spans the program started
	ChunkSpans = 'Q'
)

// MaxSummaryReason bounds the bytes of the end reason a summary chunk
// repeats, so that the chunk's payload is always under 1<<16 bytes.
const MaxSummaryReason = 1 << 15

// Castagnoli is the table of the chunks' CRC-32C.
var Castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Event opcodes inside an events chunk. Every op starts with a uvarint v
// whose low two bits select the op; the rest of v is the op's argument.
const (
	OpEnter  = 0 // v>>2 = function id; then zigzag time delta
	OpExit   = 1 // v>>2 = exit kind; then zigzag time delta
	OpSwitch = 2 // v>>2 = goroutine id of the events that follow
	OpExt    = 3 // v>>2 = extended op below
)

// Extended ops. An extended op from 1 to MaxErrorID is an error: the call
// about to exit returned error v>>2 of the error table. ExtHeldFrom and
// ExtHeldTo, each with a time, say the goroutine waited for the trace
// writer between the two; they follow the event whose recording waited.
// ExtSpanStart and ExtSpanEnd, each with a time, say the goroutine started
// or ended a span; the value op of kind ValueSpan that follows them on the
// goroutine carries the span's id. From ExtValue up, it is a value.
const (
	ExtGoroutine = 0 // zigzag time delta; then parent id, creator func, creator line, start func
	ExtSpanStart = ExtValue - 4
	ExtSpanEnd   = ExtValue - 3
	ExtHeldFrom  = ExtValue - 2
	ExtHeldTo    = ExtValue - 1
)

// MaxErrorID bounds error table ids, so that an error's op fits the
// runtime's raw event words.
const MaxErrorID = ExtSpanStart - 1

// MaxNanos bounds the times of a trace's events, in nanoseconds since it
// started: 2^52, 52 days (see tracefile.MaxNanos).
const MaxNanos = 1 << 52

// Values: with calltrail's --args, a call's arguments follow its enter,
// and its results come just before its exit (and its error), each as an
// extended op of ExtValue and up. The op's time delta carries the value's
// 64 bits instead of a time: the delta is taken from the time before, and
// the next event's delta from the value, so times stay exact around it.
// A string is its length, then up to MaxValueString bytes in ops of eight.
const (
	ExtValue = 1 << 21 // ext ops from here are values: ExtValue + kind<<1 + (1 for a result)
	// MaxValueString is the most bytes of a string value a trace keeps.
	MaxValueString = 32
	// ValueBytes is the value kind of eight bytes of the string before.
	ValueBytes = 9
	// ValueSpan is the value kind of a span's id, the eight bytes of
	// OpenTelemetry's span id, little endian: it follows ExtSpanStart
	// and ExtSpanEnd, and belongs to no call.
	ValueSpan = 10
)

// StringBytes is how many bytes of a string of length n a trace keeps.
func StringBytes(n int) int { return min(n, MaxValueString) }

// MaxChunk bounds a chunk's payload, so that a corrupt length cannot make
// a reader allocate without limit.
const MaxChunk = 64 << 20

// MaxFuncID bounds function ids; ids are dense, so anything larger is
// corruption rather than a big program.
const MaxFuncID = 1 << 22

// Rate is the nanoseconds per clock unit a reader converts event times
// at, from a trace's first clock point (t0, ns0) and the latest it has
// read (tl, nsl): rate, the one before, when the latest makes no sense.
func Rate(t0, ns0, tl, nsl int64, rate float64) float64 {
	if tl > t0 && nsl > ns0 {
		return float64(nsl-ns0) / float64(tl-t0)
	}
	return rate
}

// Nanos converts a time in clock units to nanoseconds since the trace
// started, at rate from its first clock point (t0, ns0).
func Nanos(t0, ns0 int64, rate float64, ticks int64) float64 {
	return float64(ns0) + float64(ticks-t0)*rate
}
