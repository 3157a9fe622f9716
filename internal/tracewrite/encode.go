package tracewrite

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"sort"
	"time"

	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/wire"
)

// Encoder writes a trace file. It is not safe for concurrent use: the
// runtime drives it from its single background writer.
type Encoder struct {
	w   io.Writer
	buf []byte // chunks not yet written

	// What the summary chunk repeats of the chunks before it.
	funcs  uint64 // the highest function id defined
	stats  records.Stats
	reason string // of the last end chunk
}

// NewEncoder writes the header and the metadata chunk to w. Metadata keys
// are free-form; the runtime writes the keys listed in docs/format.md.
func NewEncoder(w io.Writer, meta map[string]string) (*Encoder, error) {
	e := &Encoder{w: w}
	e.buf = append(e.buf, wire.Magic...)
	e.buf = binary.AppendUvarint(e.buf, wire.Version)
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	p := e.begin(wire.ChunkMeta)
	p = binary.AppendUvarint(p, uint64(len(keys)))
	for _, k := range keys {
		p = appendString(p, k)
		p = appendString(p, meta[k])
	}
	e.end(p)
	return e, e.Flush()
}

// begin starts a chunk in e.buf and returns the buffer to append the
// payload to; end finishes it. The payload length is not known in advance,
// so begin reserves the largest uvarint the length can need and end moves
// the payload down if the length turned out shorter.
func (e *Encoder) begin(typ byte) []byte {
	e.buf = append(e.buf, typ, 0, 0, 0, 0)
	return e.buf
}

func (e *Encoder) end(p []byte) {
	start := len(e.buf) // payload starts here
	typAt := start - 5
	n := len(p) - start
	var lb [binary.MaxVarintLen32]byte
	ln := binary.PutUvarint(lb[:], uint64(n))
	copy(p[typAt+1+ln:], p[start:])
	copy(p[typAt+1:], lb[:ln])
	p = p[:typAt+1+ln+n]
	crc := crc32.Update(0, wire.Castagnoli, p[typAt:typAt+1])
	crc = crc32.Update(crc, wire.Castagnoli, p[typAt+1+ln:])
	e.buf = binary.LittleEndian.AppendUint32(p, crc)
}

// Funcs appends a function table chunk defining ids first, first+1, ...
func (e *Encoder) Funcs(first uint32, fs []records.Func) {
	if len(fs) > 0 {
		e.funcs = max(e.funcs, uint64(first)+uint64(len(fs))-1)
	}
	e.table(wire.ChunkFuncs, first, len(fs), func(p []byte, i int) []byte {
		p = appendString(p, fs[i].Name)
		p = appendString(p, fs[i].File)
		return binary.AppendUvarint(p, uint64(fs[i].Line))
	})
}

// Errors appends an error table chunk defining ids first, first+1, ...
func (e *Encoder) Errors(first uint32, es []records.Error) {
	e.table(wire.ChunkErrors, first, len(es), func(p []byte, i int) []byte {
		p = appendString(p, es[i].Type)
		return appendString(p, es[i].Message)
	})
}

// Spans appends a chunk of span table entries: the spans whose start
// events follow.
func (e *Encoder) Spans(ss []records.Span) {
	if len(ss) == 0 {
		return
	}
	p := e.begin(wire.ChunkSpans)
	p = binary.AppendUvarint(p, uint64(len(ss)))
	for _, s := range ss {
		p = append(p, s.ID[:]...)
		p = append(p, s.Trace[:]...)
		p = append(p, s.Parent[:]...)
		var flags uint64
		if s.Remote {
			flags |= 1
		}
		p = binary.AppendUvarint(p, flags)
		p = binary.AppendUvarint(p, uint64(s.Kind))
		p = appendString(p, s.Name)
	}
	e.end(p)
}

// table appends a chunk of n entries of a table with dense ids from
// first, each appended by entry; nothing when n is 0.
func (e *Encoder) table(typ byte, first uint32, n int, entry func(p []byte, i int) []byte) {
	if n == 0 {
		return
	}
	p := e.begin(typ)
	p = binary.AppendUvarint(p, uint64(first))
	p = binary.AppendUvarint(p, uint64(n))
	for i := 0; i < n; i++ {
		p = entry(p, i)
	}
	e.end(p)
}

// Clock appends a calibration point: at the given tick count, the
// monotonic clock read ns nanoseconds since the trace started. The first
// point defines tick and time zero of the trace; times of events are
// interpolated between the first and the latest point read.
func (e *Encoder) Clock(ticks int64, ns int64) {
	p := e.begin(wire.ChunkClock)
	p = binary.AppendVarint(p, ticks)
	p = binary.AppendVarint(p, ns)
	e.end(p)
}

// Events appends the events of b as one chunk and resets b.
func (e *Encoder) Events(b *Batch) {
	if b.n == 0 {
		return
	}
	p := e.begin(wire.ChunkEvents)
	p = binary.AppendUvarint(p, uint64(b.Shard))
	p = binary.AppendVarint(p, b.base)
	p = binary.AppendUvarint(p, uint64(b.n))
	p = append(p, b.buf...)
	e.end(p)
	b.reset()
}

// Stats appends the cumulative counters.
func (e *Encoder) Stats(s records.Stats) {
	e.stats = s
	p := e.begin(wire.ChunkStats)
	p = binary.AppendUvarint(p, s.Calls)
	p = binary.AppendUvarint(p, s.DroppedCalls)
	p = binary.AppendUvarint(p, s.Flushes)
	p = binary.AppendUvarint(p, s.Waits)
	p = binary.AppendUvarint(p, s.HeldNs)
	if s.LostErrors > 0 || s.LostSpans > 0 {
		p = binary.AppendUvarint(p, s.LostErrors)
	}
	if s.LostSpans > 0 {
		p = binary.AppendUvarint(p, s.LostSpans)
	}
	e.end(p)
}

// Profile appends a profile the Go runtime collected while tracing ("cpu",
// "mutex", "block"), as runtime/pprof writes it.
func (e *Encoder) Profile(name string, pprof []byte) {
	p := e.begin(wire.ChunkPprof)
	p = appendString(p, name)
	p = append(p, pprof...)
	e.end(p)
}

// End appends an end-of-trace chunk. A trace may hold more than one (a
// program that went on after SIGINT was handled); the last one counts.
func (e *Encoder) End(reason string, wall time.Time) {
	p := e.begin(wire.ChunkEnd)
	p = appendString(p, reason)
	p = binary.AppendVarint(p, wall.UnixNano())
	e.end(p)
	e.reason = reason
}

// Summary appends a summary chunk, which lets a reader describe the
// trace from its last bytes (tracefile.File.Summary): the Totals of the
// events written before it, and what it repeats of the chunks before it
// (the function count, the counters and the reason of the last end
// chunk). Its payload ends with its own length, two bytes little endian,
// so that a reader finds its start from the end. It goes right after an
// end chunk: a reader trusts it only as the trace's last chunk.
func (e *Encoder) Summary(t *Totals) {
	p := e.begin(wire.ChunkSummary)
	start := len(p)
	for _, v := range [...]uint64{t.Calls, t.Exits, t.Panics, t.Called(), t.Goroutines, e.funcs} {
		p = binary.AppendUvarint(p, v)
	}
	t.Fold()
	p = binary.AppendVarint(p, t.maxNs)
	s := e.stats
	for _, v := range [...]uint64{s.Calls, s.DroppedCalls, s.Flushes, s.Waits, s.HeldNs, s.LostErrors} {
		p = binary.AppendUvarint(p, v)
	}
	p = appendString(p, e.reason[:min(len(e.reason), wire.MaxSummaryReason)])
	if s.LostSpans > 0 {
		p = binary.AppendUvarint(p, s.LostSpans)
	}
	p = binary.LittleEndian.AppendUint16(p, uint16(len(p)-start+2))
	e.end(p)
}

// Flush writes the buffered chunks with a single Write, so that a reader
// of a file being written sees whole chunks or nothing of them in the
// common case, and never a chunk it cannot detect as cut.
func (e *Encoder) Flush() error {
	if len(e.buf) == 0 {
		return nil
	}
	_, err := e.w.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}

func appendString(p []byte, s string) []byte {
	p = binary.AppendUvarint(p, uint64(len(s)))
	return append(p, s...)
}

// Batch accumulates the events of one shard between two writes. Within a
// batch, a goroutine's events must be appended in the order they happened;
// events of different goroutines may interleave.
//
// Enter and Exit are the runtime writer's inner loop, so they write
// varints straight into spare capacity rather than through append.
type Batch struct {
	Shard int
	// Totals, when set, counts the events AppendRaw encodes.
	Totals *Totals
	buf    []byte
	n      int    // events in buf
	enters int    // enter events in buf
	base   int64  // time of the first event
	last   int64  // time of the previous event
	g      uint64 // goroutine of the previous event
}

// maxEvent bounds the encoded size of an enter or exit event, with a
// goroutine switch before it: three varints.
const maxEvent = 3 * binary.MaxVarintLen64

func (b *Batch) reset() {
	b.buf = b.buf[:0]
	b.n = 0
	b.enters = 0
	b.g = 0
}

// Len reports the number of events in b.
func (b *Batch) Len() int { return b.n }

// Enters reports the number of enter events in b.
func (b *Batch) Enters() int { return b.enters }

// Size reports the encoded size of b in bytes.
func (b *Batch) Size() int { return len(b.buf) }

// put appends the event op (a goroutine switch first if g changed) with
// its zigzag time delta.
func (b *Batch) put(g uint64, op uint64, t int64) {
	if cap(b.buf)-len(b.buf) < maxEvent {
		b.buf = append(b.buf, make([]byte, maxEvent+len(b.buf))...)[:len(b.buf)]
	}
	if b.n == 0 {
		b.base, b.last = t, t
	}
	b.n++
	n := len(b.buf)
	p := b.buf[n : n+maxEvent]
	i := 0
	if g != b.g {
		i = putUvarint(p, g<<2|wire.OpSwitch)
		b.g = g
	}
	i += putUvarint(p[i:], op)
	d := t - b.last
	b.last = t
	i += putUvarint(p[i:], uint64(d<<1)^uint64(d>>63))
	b.buf = b.buf[:n+i]
}

func putUvarint(p []byte, v uint64) int {
	if v < 0x80 {
		p[0] = byte(v)
		return 1
	}
	if v < 0x4000 {
		p[0] = byte(v) | 0x80
		p[1] = byte(v >> 7)
		return 2
	}
	return binary.PutUvarint(p, v)
}

// Enter appends the entry of goroutine g into function fn at tick t.
func (b *Batch) Enter(g uint64, fn uint32, t int64) {
	b.put(g, uint64(fn)<<2|wire.OpEnter, t)
	b.enters++
}

// Exit appends the exit of goroutine g from its innermost open call.
func (b *Batch) Exit(g uint64, k records.ExitKind, t int64) {
	b.put(g, uint64(k)<<2|wire.OpExit, t)
}

// Error appends that goroutine g's innermost call, about to exit, returned
// error id of the error table. Its exit follows.
func (b *Batch) Error(g uint64, id uint32, t int64) {
	b.put(g, uint64(id)<<2|wire.OpExt, t)
}

// Held appends that goroutine g waited for the trace writer from tick
// from to tick to: after the event whose recording waited.
func (b *Batch) Held(g uint64, from, to int64) {
	b.put(g, wire.ExtHeldFrom<<2|wire.OpExt, from)
	b.put(g, wire.ExtHeldTo<<2|wire.OpExt, to)
}

// Goroutine appends what is known of goroutine gr.ID, first seen at tick t.
func (b *Batch) Goroutine(gr records.Goroutine, t int64) {
	b.put(gr.ID, wire.ExtGoroutine<<2|wire.OpExt, t)
	b.buf = binary.AppendUvarint(b.buf, gr.Parent)
	b.buf = binary.AppendUvarint(b.buf, uint64(gr.CreatorFunc))
	b.buf = binary.AppendUvarint(b.buf, uint64(gr.CreatorLine))
	b.buf = binary.AppendUvarint(b.buf, uint64(gr.StartFunc))
}
