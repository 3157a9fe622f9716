package tracewrite

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/wire"
)

// NewChunkEncoder returns an Encoder that writes chunks only, without the
// header and metadata NewEncoder writes first: for parts of a trace kept
// apart and put together later, as the runtime's flight recorder keeps
// the events of its last seconds and writes a trace of them on request.
func NewChunkEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// Chunks appends p, whole chunks as an Encoder writes them, as they are.
func (e *Encoder) Chunks(p []byte) { e.buf = append(e.buf, p...) }

// A ScanEvent is an enter, an exit, a wait for the trace writer or a
// span's start or end that ScanEvents found, with its time in the clock
// units the runtime recorded (see Encoder.Clock), not nanoseconds.
type ScanEvent struct {
	G     uint64
	Kind  records.EventKind // records.EnterEvent, ExitEvent, HeldEvent, SpanStartEvent or SpanEndEvent
	Func  uint32            // the function entered; 0 for an exit
	Exit  records.ExitKind
	Err   uint32 // for an exit, the error the call returned; 0 for none
	Ticks int64
	From  int64 // for a wait, when it began; it ended at Ticks
	Span  records.SpanID
}

// ScanEvents calls fn for each enter, exit, wait and span event in the events chunks among
// the whole chunks in p, in order, and skips other chunks and goroutine
// records. It checks the framing, not the checksums: p is what an Encoder
// of this process wrote. The runtime's flight recorder uses it to follow
// the calls open at the start of the window it keeps.
func ScanEvents(p []byte, fn func(ScanEvent)) error {
	var span ScanEvent // a span event waiting for its id
	for len(p) > 0 {
		typ := p[0]
		n, k := binary.Uvarint(p[1:])
		if k <= 0 || uint64(len(p)-1-k) < n+4 {
			return fmt.Errorf("%w: chunk cut short", records.ErrCorrupt)
		}
		payload := p[1+k : 1+k+int(n)]
		p = p[1+k+int(n)+4:]
		if typ != wire.ChunkEvents {
			continue
		}
		if err := scanChunk(payload, &span, fn); err != nil {
			return err
		}
	}
	return nil
}

// scan reads uvarints off p until one is bad.
type scan struct {
	p   []byte
	err error
}

// uvarint decodes the next uvarint; after an error, p is empty and it
// returns 0.
func (d *scan) uvarint() uint64 {
	if v, ok := d.short(); ok {
		return v
	}
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.err = fmt.Errorf("%w: bad varint", records.ErrCorrupt)
		d.p = nil
		return 0
	}
	d.p = d.p[n:]
	return v
}

// short decodes the next uvarint when it takes a byte, as most do, and
// reports whether it did: uvarint, inlined where it counts (the compiler
// does not inline uvarint).
func (d *scan) short() (uint64, bool) {
	if p := d.p; len(p) > 0 && p[0] < 0x80 {
		d.p = p[1:]
		return uint64(p[0]), true
	}
	return 0, false
}

func (d *scan) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func scanChunk(p []byte, span *ScanEvent, fn func(ScanEvent)) error {
	d := scan{p: p}
	d.uvarint() // shard
	t := d.varint()
	n := d.uvarint()
	var g uint64
	var errID uint32 // the error of the call about to exit
	var from int64   // when the wait whose end comes next began
	for i := uint64(0); i < n && d.err == nil; {
		v, ok := d.short()
		if !ok {
			v = d.uvarint()
		}
		op := v & 3
		if op == wire.OpSwitch {
			g = v >> 2
			continue
		}
		dt, ok := d.short()
		if !ok {
			dt = d.uvarint()
		}
		t += int64(dt>>1) ^ -int64(dt&1)
		i++
		switch op {
		case wire.OpEnter:
			fn(ScanEvent{G: g, Kind: records.EnterEvent, Func: uint32(v >> 2), Ticks: t})
		case wire.OpExit:
			fn(ScanEvent{G: g, Kind: records.ExitEvent, Exit: records.ExitKind(v >> 2), Err: errID, Ticks: t})
			errID = 0
		case wire.OpExt:
			if v>>2 == wire.ExtGoroutine { // a goroutine record: parent, creator func and line, start func
				d.uvarint()
				d.uvarint()
				d.uvarint()
				d.uvarint()
			} else if v>>2 <= wire.MaxErrorID { // an error of the call about to exit
				errID = uint32(v >> 2)
			} else if v>>2 == wire.ExtHeldFrom {
				from = t
			} else if v>>2 == wire.ExtHeldTo {
				fn(ScanEvent{G: g, Kind: records.HeldEvent, From: min(from, t), Ticks: t})
			} else if v>>2 == wire.ExtSpanStart || v>>2 == wire.ExtSpanEnd {
				*span = ScanEvent{G: g, Kind: records.SpanStartEvent, Ticks: t}
				if v>>2 == wire.ExtSpanEnd {
					span.Kind = records.SpanEndEvent
				}
			} else if v>>2 == wire.ExtValue+wire.ValueSpan<<1 {
				// The id of the span event before, its bits in t.
				if span.Kind != 0 && span.G == g {
					binary.LittleEndian.PutUint64(span.Span[:], uint64(t))
					fn(*span)
				}
				span.Kind = 0
			} // else a value, whose delta was its bits: the next delta restores the time
		}
	}
	return d.err
}
