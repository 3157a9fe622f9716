package records

import (
	"errors"
	"strconv"
)

// EventKind tells what an event records: tracefile.Event says what each
// kind means.
type EventKind uint8

// Kinds of events, as package tracefile documents them.
const (
	EnterEvent EventKind = iota + 1
	ExitEvent
	GoroutineEvent
	ValueEvent
	HeldEvent
	SpanStartEvent
	SpanEndEvent
)

// ErrCorrupt is wrapped by every error about malformed input.
var ErrCorrupt = errors.New("corrupt trace")

// ExitKind says how a call ended.
type ExitKind uint8

const (
	Return     ExitKind = iota // the function returned
	Panic                      // the function was left by a panic
	Goexit                     // the function was left by runtime.Goexit
	Unfinished                 // the trace ended while the call was running
)

func (k ExitKind) String() string {
	switch k {
	case Return:
		return "return"
	case Panic:
		return "panic"
	case Goexit:
		return "goexit"
	case Unfinished:
		return "unfinished"
	}
	return "unknown"
}

// Func describes a traced function, or a place where a goroutine was
// created. Name is the name Go's runtime gives the function
// ("main.(*T).M", "main.main.func1").
type Func struct {
	Name string
	File string
	Line int
}

// A TraceID is an OpenTelemetry trace id: the request a span is part of.
type TraceID [16]byte

// String is the id in lower-case hex, as W3C's traceparent writes it.
func (t TraceID) String() string { return hexString(t[:]) }

// IsValid reports whether t is not all zeros.
func (t TraceID) IsValid() bool { return t != TraceID{} }

// MarshalText writes the id in hex, as JSON shows it.
func (t TraceID) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// A SpanID is an OpenTelemetry span id.
type SpanID [8]byte

// String is the id in lower-case hex.
func (s SpanID) String() string { return hexString(s[:]) }

// IsValid reports whether s is not all zeros.
func (s SpanID) IsValid() bool { return s != SpanID{} }

// MarshalText writes the id in hex, as JSON shows it.
func (s SpanID) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// A Span is an entry of the span table: an OpenTelemetry span the program
// started, a unit of work of a request. When and on which goroutine it
// started and ended are events of the trace (SpanStartEvent and
// SpanEndEvent, with tracefile.Event.Span).
type Span struct {
	ID     SpanID  `json:"span_id"`
	Trace  TraceID `json:"trace_id"`
	Parent SpanID  `json:"parent_span_id"` // zero for a request's root span
	// Remote is set when the parent span is another process's, as an
	// incoming traceparent header names it.
	Remote bool `json:"remote,omitempty"`
	// Kind is OpenTelemetry's SpanKind: 1 internal, 2 server, 3 client,
	// 4 producer, 5 consumer; 0 unspecified.
	Kind int    `json:"kind"`
	Name string `json:"name"`
}

// MaxSpanName bounds the bytes of a span's name the trace keeps.
const MaxSpanName = 256

// SpanLabel is the key of the runtime/pprof label with which a program
// that records its spans labels its goroutines while a span is open: its
// value is the span's id in hex, so that a CPU profile's samples say which
// span, and request, they were taken for.
const SpanLabel = "calltrail.span"

// An Error is an entry of the error table: an error some call returned,
// by its dynamic type ("*fs.PathError") and its message, which the runtime
// truncates (see the runtime's documentation). The message is as the
// error's Error method gave it, newlines, control characters and all:
// shown, it is quoted (String, Append, or a JSON encoding), never
// written raw.
type Error struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// String is how calltrail writes an error everywhere: its type, then its
// message quoted, `*fs.PathError "open x: no such file or directory"`.
func (e Error) String() string { return string(e.Append(nil)) }

// Append appends e as String writes it, to b: for writers that make
// a line per call and must not allocate for each.
func (e Error) Append(b []byte) []byte {
	b = append(b, e.Type...)
	b = append(b, ' ')
	return strconv.AppendQuote(b, e.Message)
}

// Ends are the errors that mean the end of something rather than a
// failure: io.EOF, the normal end of input; fs.SkipDir and fs.SkipAll,
// which end a walk early on purpose; http.ErrServerClosed, how Serve
// returns after Shutdown. calltrail shows them as it shows any error,
// but does not count a call returning one as failed.
var Ends = []Error{
	{"*errors.errorString", "EOF"},
	{"*errors.errorString", "skip this directory"},
	{"*errors.errorString", "skip everything and stop the walk"},
	{"*errors.errorString", "http: Server closed"},
}

// End reports whether e is one of Ends: returning it is not a failure.
func (e Error) End() bool {
	for _, end := range Ends {
		if e == end {
			return true
		}
	}
	return false
}

// Goroutine describes a goroutine as the runtime saw it when the goroutine
// first made a traced call. Fields other than ID are zero when the Go runtime
// did not make them available.
type Goroutine struct {
	ID          uint64
	Parent      uint64 // goroutine that ran the go statement
	CreatorFunc uint32 // function that holds the go statement (a function id)
	CreatorLine int    // line of the go statement
	StartFunc   uint32 // function the goroutine started with (a function id)
	FirstSeen   int64  // nanoseconds since the trace started
}

// Stats are the counters the runtime keeps. They are cumulative: each
// stats chunk replaces the previous one.
type Stats struct {
	Calls        uint64 // calls recorded (enters written)
	DroppedCalls uint64 // calls not recorded because the buffers were full
	Flushes      uint64 // write cycles of the background writer

	// Waits counts the times a goroutine found its ring full and waited
	// for the writer rather than drop the call; HeldNs is the time the
	// goroutines spent so, summed. Zero in traces written before they
	// were recorded.
	Waits  uint64
	HeldNs uint64
	// LostErrors counts errors of recorded calls left out for want of
	// room (CALLTRAIL_FULL=drop): those calls read as returning none.
	LostErrors uint64
	// LostSpans counts OpenTelemetry spans the trace does not follow:
	// started past the bound of spans open at once, or with no room in
	// the buffers. Their calls read as outside them.
	LostSpans uint64
}

// hexString is b in lower-case hex: encoding/hex's, which the runtime
// would otherwise compile for this alone.
func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	s := make([]byte, 2*len(b))
	for i, c := range b {
		s[2*i], s[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(s)
}
