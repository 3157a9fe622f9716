package tracefile

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"time"

	"github.com/calltrail/calltrail/internal/gtable"
	"github.com/calltrail/calltrail/internal/wire"
)

// Summary describes a whole trace.
type Summary struct {
	Meta       Meta
	Version    int
	Duration   time.Duration // from the start of tracing to the last event
	Goroutines int           // goroutines that made traced calls
	Funcs      int           // functions in the function table
	Called     int           // functions called: those the other verbs list
	Calls      uint64        // calls recorded
	Unfinished int           // calls still running when the trace ended
	Panics     uint64        // calls left by a panic
	Stats      Stats
	End        string // why tracing ended; empty if the trace has no end
	Bytes      int64  // size of the input read
}

// Summarize reads all of r. It returns the summary of what it could read
// and the error that stopped it, nil at a clean end of input.
func Summarize(r *Reader) (Summary, error) {
	var gs gtable.Table[struct{}]
	var called []bool // by function id
	s := Summary{Meta: r.Meta(), Version: r.Version()}
	var err error
	var ev Event
	var lastG uint64
	for {
		// Most events come as Calls, reading ahead (see ReadCall).
		var kind EventKind
		var g uint64
		var fn uint32
		var exit ExitKind
		if c, ok := r.ReadCall(); ok {
			kind, g, fn, exit = c.Kind(), c.G, c.Func(), c.Exit()
		} else if err = r.Read(&ev); err != nil {
			break
		} else {
			kind, g, fn, exit = ev.Kind, ev.G, ev.Func, ev.Exit
		}
		// A goroutine's events come in runs. It counts by its calls:
		// a snapshot holds records of goroutines gone before it.
		if g != lastG && (kind == EnterEvent || kind == ExitEvent) {
			gs.Put(g)
			lastG = g
		}
		if kind == EnterEvent {
			for int(fn) >= len(called) {
				called = append(called, false)
			}
			if !called[fn] {
				called[fn] = true
				s.Called++
			}
		}
		if kind == ExitEvent {
			switch exit {
			case Unfinished:
				s.Unfinished++
			case Panic:
				s.Panics++
			}
		}
	}
	if err == io.EOF {
		err = nil
	}
	s.Goroutines = gs.Len()
	s.Funcs = r.NumFuncs()
	s.Calls = r.Calls()
	s.Duration = time.Duration(r.MaxTime())
	s.Stats = r.Stats()
	s.End, _ = r.End()
	s.Bytes = r.Offset()
	return s, err
}

// ReadSummary describes the trace in the first size bytes of r from its
// last chunk, the summary a calltrail runtime writes after the end of a
// trace or snapshot: in time independent of its calls, reading its
// header and its last bytes only. It reports false when the trace does
// not end with one (cut short, still being written, or written before
// summaries were), and Summarize must read it. It checks the summary's
// checksum but not the chunks before it: Summarize checks them all.
// Its error is NewReader's, for input that is not a trace.
func ReadSummary(r io.ReaderAt, size int64) (Summary, bool, error) {
	sr := io.NewSectionReader(r, 0, size)
	rd, err := NewReader(sr)
	if err != nil {
		return Summary{}, false, err
	}
	s, ok := rd.summary(r, size)
	return s, ok, nil
}

// Summary is ReadSummary of the file f has open.
func (f *File) Summary() (Summary, bool) {
	info, err := f.f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return Summary{}, false
	}
	return f.Reader.summary(f.f, info.Size())
}

// summary reads the summary chunk that ends the size bytes of r, whose
// header and metadata rd has read.
func (rd *Reader) summary(r io.ReaderAt, size int64) (Summary, bool) {
	// The chunk ends with its payload's length, two bytes, and the
	// checksum, four.
	var tail [6]byte
	if size < rd.off+int64(len(tail)) {
		return Summary{}, false
	}
	if _, err := r.ReadAt(tail[:], size-int64(len(tail))); err != nil {
		return Summary{}, false
	}
	n := int64(binary.LittleEndian.Uint16(tail[:2]))
	start := size - 4 - n - int64(uvarintLen(uint64(n))) - 1
	if n < 2 || start < rd.off {
		return Summary{}, false
	}
	c := make([]byte, size-start)
	if _, err := r.ReadAt(c, start); err != nil {
		return Summary{}, false
	}
	if c[0] != wire.ChunkSummary {
		return Summary{}, false
	}
	if l, k := binary.Uvarint(c[1:]); k <= 0 || l != uint64(n) {
		return Summary{}, false
	}
	p := c[len(c)-4-int(n) : len(c)-4]
	crc := crc32.Update(0, wire.Castagnoli, c[:1])
	crc = crc32.Update(crc, wire.Castagnoli, p)
	if crc != binary.LittleEndian.Uint32(c[len(c)-4:]) {
		return Summary{}, false
	}
	d := dec{p: p[:len(p)-2]}
	calls, exits, panics, called, goroutines, funcs := d.uvarint(), d.uvarint(), d.uvarint(), d.uvarint(), d.uvarint(), d.uvarint()
	maxNs := d.varint()
	st := Stats{Calls: d.uvarint(), DroppedCalls: d.uvarint(), Flushes: d.uvarint(), Waits: d.uvarint(), HeldNs: d.uvarint(), LostErrors: d.uvarint()}
	reason := d.string()
	if len(d.p) > 0 { // written when spans were lost
		st.LostSpans = d.uvarint()
	}
	if d.finish("summary") != nil || exits > calls || called > funcs || funcs > wire.MaxFuncID {
		return Summary{}, false
	}
	if maxNs < 0 || maxNs > MaxNanos {
		return Summary{}, false
	}
	return Summary{
		Meta:       rd.meta,
		Version:    rd.version,
		Duration:   time.Duration(maxNs),
		Goroutines: int(min(goroutines, 1<<62)),
		Funcs:      int(funcs),
		Called:     int(called),
		Calls:      calls,
		Unfinished: int(min(calls-exits, 1<<62)),
		Panics:     panics,
		Stats:      st,
		End:        reason,
		Bytes:      size,
	}, true
}
