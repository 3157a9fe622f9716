package tracetest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

// zeroTime is the wall-clock time of the end records: tests compare
// outputs, which must not depend on when they ran.
var zeroTime = time.Unix(0, 0)

// Build makes a trace file from a script, a line an event, times in
// nanoseconds:
//
//	G +F T              goroutine G enters function F at time T
//	G - T               G's innermost call returns
//	G -ERR T            ... returns error ERR, of type *errors.errorString
//	G ! T               ... is left by a panic
//	G go PARENT F T     G was started by goroutine PARENT, in function F
//	G held FROM T       G waited for the trace writer from FROM to T
//	G span S P NAME T   G started span S (a number), a child of span P (0
//	                    for a root), named NAME, in the trace of its root
//	G end S T           span S, which G started, ended
//	meta KEY VALUE      the metadata has KEY (mode, window_start_ns...)
//
// The trace ends with an end record.
func Build(script string) ([]byte, error) {
	var buf bytes.Buffer
	meta := map[string]string{"program": "test"}
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(script), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "meta" {
			meta[f[1]] = f[2]
			continue
		}
		lines = append(lines, line)
	}
	e, err := tracewrite.NewEncoder(&buf, meta)
	if err != nil {
		return nil, err
	}
	ids := map[string]uint32{}
	var funcs []tracefile.Func
	id := func(name string) uint32 {
		if i, ok := ids[name]; ok {
			return i
		}
		funcs = append(funcs, tracefile.Func{Name: name, File: "test.go", Line: len(funcs) + 1})
		ids[name] = uint32(len(funcs))
		return ids[name]
	}
	var b tracewrite.Batch
	var last int64
	errIDs := map[string]uint32{}
	var errs []tracefile.Error
	var spans []tracefile.Span
	traceOf := map[uint64]tracefile.TraceID{}
	for n, line := range lines {
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("line %d: %q: too short", n+1, line)
		}
		g, err1 := strconv.ParseUint(f[0], 10, 64)
		tm, err2 := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("line %d: %q: want a goroutine first and a time last", n+1, line)
		}
		last = max(last, tm)
		switch {
		case strings.HasPrefix(f[1], "+"):
			b.Enter(g, id(f[1][1:]), tm)
		case f[1] == "-":
			b.Exit(g, tracefile.Return, tm)
		case strings.HasPrefix(f[1], "-"):
			msg := f[1][1:]
			if errIDs[msg] == 0 {
				errs = append(errs, tracefile.Error{Type: "*errors.errorString", Message: msg})
				errIDs[msg] = uint32(len(errs))
			}
			b.Error(g, errIDs[msg], tm)
			b.Exit(g, tracefile.Return, tm)
		case f[1] == "!":
			b.Exit(g, tracefile.Panic, tm)
		case f[1] == "held" && len(f) == 4:
			from, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %q: bad start", n+1, line)
			}
			b.Held(g, from, tm)
		case f[1] == "span" && len(f) == 6:
			s, err1 := strconv.ParseUint(f[2], 10, 64)
			p, err2 := strconv.ParseUint(f[3], 10, 64)
			if err1 != nil || err2 != nil || s == 0 {
				return nil, fmt.Errorf("line %d: %q: bad span", n+1, line)
			}
			sp := tracefile.Span{ID: SpanID(s), Name: f[4], Kind: 1}
			if p != 0 {
				sp.Parent, sp.Trace = SpanID(p), traceOf[p]
			} else {
				binary.BigEndian.PutUint64(sp.Trace[8:], s)
			}
			traceOf[s] = sp.Trace
			spans = append(spans, sp)
			b.AppendRaw([]tracewrite.Raw{{Word: tracewrite.RawSpan(g, false), Time: tm}, {Word: tracewrite.RawSpanID(g), Time: int64(binary.LittleEndian.Uint64(sp.ID[:]))}})
		case f[1] == "end" && len(f) == 4:
			s, err := strconv.ParseUint(f[2], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %q: bad span", n+1, line)
			}
			id := SpanID(s)
			b.AppendRaw([]tracewrite.Raw{{Word: tracewrite.RawSpan(g, true), Time: tm}, {Word: tracewrite.RawSpanID(g), Time: int64(binary.LittleEndian.Uint64(id[:]))}})
		case f[1] == "go" && len(f) == 5:
			parent, err := strconv.ParseUint(f[2], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %q: bad parent", n+1, line)
			}
			b.Goroutine(tracefile.Goroutine{ID: g, Parent: parent, CreatorFunc: id(f[3])}, tm)
		default:
			return nil, fmt.Errorf("line %d: %q: unknown event", n+1, line)
		}
	}
	e.Clock(0, 0)
	e.Funcs(1, funcs)
	if len(errs) > 0 {
		e.Errors(1, errs)
	}
	e.Spans(spans)
	e.Clock(last, last) // the trace lasts until its last event
	e.Events(&b)
	e.Stats(tracefile.Stats{Calls: uint64(b.Enters()), Flushes: 1})
	e.End("main returned", zeroTime)
	if err := e.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SpanID is the id of span n of a script: n, big endian.
func SpanID(n uint64) tracefile.SpanID {
	var id tracefile.SpanID
	binary.BigEndian.PutUint64(id[:], n)
	return id
}

// Recursion makes a trace of main.main calling main.rec, which calls
// itself depth times in all and, at the bottom, main.leaf: the shape that
// made views quadratic in depth.
func Recursion(depth int) []byte {
	var buf bytes.Buffer
	e, _ := tracewrite.NewEncoder(&buf, map[string]string{"program": "recursion"})
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.main", File: "main.go", Line: 1}, {Name: "main.rec", File: "main.go", Line: 5}, {Name: "main.leaf", File: "main.go", Line: 9}})
	var b tracewrite.Batch
	t := int64(0)
	b.Enter(1, 1, t)
	for i := 0; i < depth; i++ {
		t += 10
		b.Enter(1, 2, t)
		if b.Size() > 1<<20 {
			e.Events(&b)
		}
	}
	t += 10
	b.Enter(1, 3, t)
	t += 10
	b.Exit(1, tracefile.Return, t)
	for i := 0; i <= depth; i++ {
		t += 10
		b.Exit(1, tracefile.Return, t)
		if b.Size() > 1<<20 {
			e.Events(&b)
		}
	}
	e.Clock(t, t)
	e.Events(&b)
	e.Stats(tracefile.Stats{Calls: uint64(depth + 2), Flushes: 1})
	e.End("main returned", zeroTime)
	e.Flush()
	return buf.Bytes()
}

// Goroutines writes to w a trace of main.main starting n goroutines from
// one call, each making one call of main.leaf: the shape of a long-lived
// server, and of an input that grew every verb's memory with the number
// of goroutines.
func Goroutines(w io.Writer, n int) error {
	e, err := tracewrite.NewEncoder(w, map[string]string{"program": "goroutines"})
	if err != nil {
		return err
	}
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.main", File: "main.go", Line: 1}, {Name: "main.leaf", File: "main.go", Line: 9}})
	var b tracewrite.Batch
	t := int64(0)
	b.Enter(1, 1, t)
	for i := range n {
		g := uint64(i) + 2
		t += 10
		b.Goroutine(tracefile.Goroutine{ID: g, Parent: 1, CreatorFunc: 1, CreatorLine: 5, StartFunc: 2}, t)
		b.Enter(g, 2, t)
		t += 10
		b.Exit(g, tracefile.Return, t)
		if b.Size() > 1<<20 {
			e.Events(&b)
			if err := e.Flush(); err != nil {
				return err
			}
		}
	}
	t += 10
	b.Exit(1, tracefile.Return, t)
	e.Clock(t, t)
	e.Events(&b)
	e.Stats(tracefile.Stats{Calls: uint64(n + 1), Flushes: 1})
	e.End("main returned", zeroTime)
	return e.Flush()
}
