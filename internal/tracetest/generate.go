package tracetest

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math"
	"time"

	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

// Generate turns fuzz input into a trace file whose chunks are all well
// formed, with valid checksums, but whose contents are what a damaged or
// hostile writer could put there: times that jump to the ends of int64
// and back, clocks that run backwards, goroutine and function ids at
// their limits, exits without enters, goroutine records of unknown
// parents, function tables that redefine ids, counters near overflow,
// profiles that are garbage or inflate far beyond their size, several end
// records, spans whose events name spans the table lacks, end spans never
// started, or come without their ids. Every byte of data steers one choice, so that the fuzzer's
// mutations move between these cases.
func Generate(data []byte) []byte {
	g := &gen{data: data}
	var buf bytes.Buffer
	meta := map[string]string{"program": g.str(), "path": g.str()}
	if g.bit() {
		meta["gomaxprocs"] = g.str()
		meta["full"] = g.str()
	}
	e, _ := tracewrite.NewEncoder(&buf, meta)
	e.Clock(g.time(), g.time())
	funcs := int(g.byte()%8) + 1
	e.Funcs(1, g.funcs(funcs))
	var b tracewrite.Batch
	t := int64(0)
	for steps := 0; len(g.data) > 0 && steps < 10_000; steps++ {
		switch g.byte() % 12 {
		case 0, 1, 2, 3: // the common case: a call begins
			t = g.next(t)
			b.Enter(g.goroutine(), g.fn(funcs), t)
		case 4, 5, 6:
			t = g.next(t)
			b.Exit(g.goroutine(), tracefile.ExitKind(g.byte()%3), t)
		case 7:
			t = g.next(t)
			b.Goroutine(tracefile.Goroutine{ID: g.goroutine(), Parent: g.goroutine(), CreatorFunc: g.fn(funcs), CreatorLine: int(g.u32()), StartFunc: g.fn(funcs)}, t)
		case 8:
			b.Shard = int(g.byte() % 5)
			e.Events(&b)
		case 9:
			e.Clock(g.time(), g.time())
		case 10:
			switch g.byte() % 5 {
			case 0:
				e.Stats(tracefile.Stats{Calls: g.u64(), DroppedCalls: g.u64(), Flushes: g.u64(), Waits: g.u64(), HeldNs: g.u64()})
			case 1:
				first := g.u32() % (1 << 23) // past the reader's bound at times
				n := int(g.byte()%4) + 1
				e.Funcs(first, g.funcs(n))
				if int(first)+n-1 > funcs && first < 1<<12 {
					funcs = int(first) + n - 1
				}
			case 2:
				e.Profile([]string{"cpu", "block", "mutex", "heap"}[g.byte()%4], g.profile())
			case 3:
				e.End(g.str(), time.Unix(0, g.time()))
			case 4:
				var ss []tracefile.Span
				for n := g.byte() % 4; n > 0; n-- {
					s := tracefile.Span{ID: tracefile.SpanID{g.byte() % 4}, Parent: tracefile.SpanID{g.byte() % 4}, Kind: int(g.byte()), Name: g.str(), Remote: g.bit()}
					s.Trace[0] = g.byte() % 2
					ss = append(ss, s)
				}
				e.Spans(ss)
			}
		case 11:
			if g.bit() {
				t = g.time()
				break
			}
			// A span event: its id, of a few, after it, or not.
			gr, id := g.goroutine(), tracefile.SpanID{g.byte() % 4}
			t = g.next(t)
			raw := []tracewrite.Raw{{Word: tracewrite.RawSpan(gr, g.bit()), Time: t}, {Word: tracewrite.RawSpanID(gr), Time: int64(binary.LittleEndian.Uint64(id[:]))}}
			if g.bit() {
				raw = raw[:1]
			} else if g.bit() {
				raw = raw[1:]
			}
			b.AppendRaw(raw)
		}
	}
	e.Events(&b)
	if g.bit() {
		e.End("main returned", time.Unix(0, 0))
	}
	e.Flush()
	return buf.Bytes()
}

type gen struct{ data []byte }

func (g *gen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	c := g.data[0]
	g.data = g.data[1:]
	return c
}

func (g *gen) bit() bool { return g.byte()&1 == 1 }

func (g *gen) u32() uint32 {
	return uint32(g.byte()) | uint32(g.byte())<<8 | uint32(g.byte())<<16 | uint32(g.byte())<<24
}

func (g *gen) u64() uint64 {
	switch g.byte() % 4 {
	case 0:
		return uint64(g.byte())
	case 1:
		return math.MaxUint64 - uint64(g.byte())
	case 2:
		return 1<<63 + uint64(g.u32())
	}
	return uint64(g.u32())<<32 | uint64(g.u32())
}

// time returns an extreme or an ordinary time.
func (g *gen) time() int64 {
	switch g.byte() % 8 {
	case 0:
		return math.MaxInt64 - int64(g.byte())
	case 1:
		return math.MinInt64 + int64(g.byte())
	case 2:
		return -int64(g.u32())
	case 3:
		return int64(g.u64())
	}
	return int64(g.u32())
}

// next returns the time of the next event: mostly a little later, at
// times much later, earlier, or at an extreme.
func (g *gen) next(t int64) int64 {
	switch g.byte() % 16 {
	case 0:
		return g.time()
	case 1:
		return t - int64(g.byte())
	case 2:
		return t + int64(g.u32())<<16
	}
	return t + int64(g.byte())
}

// goroutine returns a goroutine id: one of a few, or one at the edge of
// what the format and the runtime allow.
func (g *gen) goroutine() uint64 {
	switch c := g.byte(); c % 16 {
	case 0:
		return 1<<38 - 1 - uint64(c>>4)
	case 1:
		return uint64(g.u32()) + 1
	case 2:
		return 1<<57 + uint64(c)
	default:
		return uint64(c%5) + 1
	}
}

// fn returns a function id: mostly defined, at times 0 or past the table.
func (g *gen) fn(funcs int) uint32 {
	switch c := g.byte(); c % 16 {
	case 0:
		return 0
	case 1:
		return uint32(funcs) + 1 + uint32(c>>4)
	case 2:
		return 1<<22 - 1
	default:
		return uint32(int(c)%funcs) + 1
	}
}

func (g *gen) str() string {
	switch g.byte() % 4 {
	case 0:
		return ""
	case 1:
		return "main.main"
	case 2:
		n := int(g.byte())
		if n > len(g.data) {
			n = len(g.data)
		}
		s := string(g.data[:n])
		g.data = g.data[n:]
		return s
	}
	return []string{"main.f", "main.(*T).m", "a;b c\n", "\x00\xff", "runtime.asyncPreempt", "runtime.goexit"}[g.byte()%6]
}

func (g *gen) funcs(n int) []tracefile.Func {
	fs := make([]tracefile.Func, n)
	for i := range fs {
		fs[i] = tracefile.Func{Name: g.str(), File: g.str(), Line: int(g.u32() >> 1)}
		if fs[i].Name == "" && g.bit() {
			fs[i].Name = "main.f" + string(rune('a'+i))
		}
	}
	return fs
}

// profile returns bytes for a profile chunk: garbage, or gzip that
// inflates far beyond its size.
func (g *gen) profile() []byte {
	switch g.byte() % 3 {
	case 0:
		n := min(int(g.byte()), len(g.data))
		p := g.data[:n]
		g.data = g.data[n:]
		return p
	case 1:
		// A gzip bomb: a little input that inflates to many megabytes.
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(make([]byte, (int(g.byte()%4)+2)<<20))
		zw.Close()
		return buf.Bytes()
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	n := min(int(g.byte()), len(g.data))
	zw.Write(g.data[:n])
	g.data = g.data[n:]
	zw.Close()
	return buf.Bytes()
}
