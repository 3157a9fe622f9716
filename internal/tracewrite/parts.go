package tracefile

import (
	"encoding/binary"
	"fmt"
	"io"
)

// NewChunkEncoder returns an Encoder that writes chunks only, without the
// header and metadata NewEncoder writes first: for parts of a trace kept
// apart and put together later, as the runtime's flight recorder keeps
// the events of its last seconds and writes a trace of them on request.
func NewChunkEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// Chunks appends p, whole chunks as an Encoder writes them, as they are.
func (e *Encoder) Chunks(p []byte) { e.buf = append(e.buf, p...) }

// A ScanEvent is an enter, an exit or a wait for the trace writer that
// ScanEvents found, with its time in the clock units the runtime recorded
// (see Encoder.Clock), not nanoseconds.
type ScanEvent struct {
	G     uint64
	Kind  EventKind // EnterEvent, ExitEvent or HeldEvent
	Func  uint32    // the function entered; 0 for an exit
	Exit  ExitKind
	Err   uint32 // for an exit, the error the call returned; 0 for none
	Ticks int64
	From  int64 // for a wait, when it began; it ended at Ticks
}

// ScanEvents calls fn for each enter and exit in the events chunks among
// the whole chunks in p, in order, and skips other chunks and goroutine
// records. It checks the framing, not the checksums: p is what an Encoder
// of this process wrote. The runtime's flight recorder uses it to follow
// the calls open at the start of the window it keeps.
func ScanEvents(p []byte, fn func(ScanEvent)) error {
	for len(p) > 0 {
		typ := p[0]
		n, k := binary.Uvarint(p[1:])
		if k <= 0 || uint64(len(p)-1-k) < n+4 {
			return fmt.Errorf("%w: chunk cut short", ErrCorrupt)
		}
		payload := p[1+k : 1+k+int(n)]
		p = p[1+k+int(n)+4:]
		if typ != chunkEvents {
			continue
		}
		if err := scanChunk(payload, fn); err != nil {
			return err
		}
	}
	return nil
}

func scanChunk(p []byte, fn func(ScanEvent)) error {
	d := dec{p: p}
	d.uvarint() // shard
	t := d.varint()
	n := d.uvarint()
	var g uint64
	var errID uint32 // the error of the call about to exit
	var from int64   // when the wait whose end comes next began
	for i := uint64(0); i < n && d.err == nil; {
		v := d.uvarint()
		op := v & 3
		if op == opSwitch {
			g = v >> 2
			continue
		}
		dt := d.uvarint()
		t += int64(dt>>1) ^ -int64(dt&1)
		i++
		switch op {
		case opEnter:
			fn(ScanEvent{G: g, Kind: EnterEvent, Func: uint32(v >> 2), Ticks: t})
		case opExit:
			fn(ScanEvent{G: g, Kind: ExitEvent, Exit: ExitKind(v >> 2), Err: errID, Ticks: t})
			errID = 0
		case opExt:
			if v>>2 == extGoroutine { // a goroutine record: parent, creator func and line, start func
				d.uvarint()
				d.uvarint()
				d.uvarint()
				d.uvarint()
			} else if v>>2 <= MaxErrorID { // an error of the call about to exit
				errID = uint32(v >> 2)
			} else if v>>2 == extHeldFrom {
				from = t
			} else if v>>2 == extHeldTo {
				fn(ScanEvent{G: g, Kind: HeldEvent, From: min(from, t), Ticks: t})
			} // else a value, whose delta was its bits: the next delta restores the time
		}
	}
	return d.err
}
