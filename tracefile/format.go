package tracefile

import (
	"errors"

	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/wire"
)

// Magic opens every trace file.
const Magic = wire.Magic

// Version is the format version this package writes and the newest it reads.
const Version = wire.Version

// MaxErrorID bounds error table ids, so that an error's op fits the
// runtime's raw event words.
const MaxErrorID = wire.MaxErrorID

// MaxNanos bounds the times of a trace's events, in nanoseconds since it
// started: 2^52, 52 days. A later time is damage, and so that sums of
// durations stay far from overflow, the reader refuses it.
const MaxNanos = wire.MaxNanos

// ErrCorrupt is wrapped by every error about malformed input.
var ErrCorrupt = records.ErrCorrupt

// ErrTruncated is returned when the file ends in the middle of a chunk:
// everything before that chunk has been read.
var ErrTruncated = errors.New("trace is truncated")

// ErrNotTrace is returned for input that is not a calltrail trace at all.
var ErrNotTrace = errors.New("not a calltrail trace")

// ErrEmpty is returned for an empty input.
var ErrEmpty = errors.New("trace file is empty")

// The records of a trace are defined where the runtime that writes them
// takes them from, which does not compile this reader into every traced
// program; here they have their names for the reader's users.
type (
	// EventKind tells what an Event records.
	EventKind = records.EventKind
	// ExitKind says how a call ended: Return, Panic, Goexit, or
	// Unfinished when the trace ended while the call was running.
	ExitKind = records.ExitKind
	// Func describes a traced function, or a place where a goroutine was
	// created. Name is the name Go's runtime gives the function
	// ("main.(*T).M", "main.main.func1").
	Func = records.Func
	// A TraceID is an OpenTelemetry trace id: the request a span is part
	// of. Its String is lower-case hex, as W3C's traceparent writes it.
	TraceID = records.TraceID
	// A SpanID is an OpenTelemetry span id. Its String is lower-case hex.
	SpanID = records.SpanID
	// A Span is an entry of the span table: an OpenTelemetry span the
	// program started, a unit of work of a request. When and on which
	// goroutine it started and ended are events of the trace
	// (SpanStartEvent and SpanEndEvent, with Event.Span).
	Span = records.Span
	// An Error is an entry of the error table: an error some call
	// returned, by its dynamic type ("*fs.PathError") and its message,
	// which the runtime truncates. Its String is how calltrail writes an
	// error everywhere: `*fs.PathError "open x: no such file or
	// directory"`; its End reports whether it is one of Ends.
	Error = records.Error
	// Goroutine describes a goroutine as the runtime saw it when the
	// goroutine first made a traced call.
	Goroutine = records.Goroutine
	// Stats are the counters the runtime keeps. They are cumulative:
	// each stats chunk replaces the previous one.
	Stats = records.Stats
	// ValueKind says what a Value holds.
	ValueKind = records.ValueKind
	// A Value is an argument or result of a call, recorded with --args.
	Value = records.Value
	// Coverage says what calltrail's build traced of one package of the
	// program, and what it left out and why, so that a question about a
	// function outside the trace can be answered with the reason instead
	// of "no function".
	Coverage = records.Coverage
	// Omitted is a function of an instrumented package left untraced.
	Omitted = records.Omitted
	// Untraced is a package of the program that was not instrumented.
	Untraced = records.Untraced
)

// Kinds of events.
const (
	EnterEvent     = records.EnterEvent     // a call began
	ExitEvent      = records.ExitEvent      // a call ended (see Event.Exit)
	GoroutineEvent = records.GoroutineEvent // a goroutine made its first traced call (see Reader.Goroutine)
	ValueEvent     = records.ValueEvent     // an argument or result of the goroutine's innermost call (see Event.Value)
	// HeldEvent is a wait for the trace writer, from ScanEvent.From to
	// its Ticks: ScanEvents gives it; Reader gives exits their Held.
	HeldEvent      = records.HeldEvent
	SpanStartEvent = records.SpanStartEvent // the goroutine started span Event.Span (see Reader.Span)
	// SpanEndEvent: span Event.Span ended. Its goroutine is the one
	// that started the span, whichever goroutine ended it, so that the
	// end comes among the events of the goroutine its calls ran in.
	SpanEndEvent = records.SpanEndEvent
)

// How calls end.
const (
	Return     = records.Return     // the function returned
	Panic      = records.Panic      // the function was left by a panic
	Goexit     = records.Goexit     // the function was left by runtime.Goexit
	Unfinished = records.Unfinished // the trace ended while the call was running
)

// Kinds of values. Only the kinds of Go's basic types are recorded whole;
// of the others, a length or a type.
const (
	IntValue    = records.IntValue    // Bits is an int64
	UintValue   = records.UintValue   // Bits is a uint64
	FloatValue  = records.FloatValue  // Bits is a float64's bits
	BoolValue   = records.BoolValue   // Bits is 0 or 1
	StringValue = records.StringValue // Str holds up to MaxValueString bytes of it, Bits its length
	LenValue    = records.LenValue    // a slice, map, array or channel: Bits is its length
	TypeValue   = records.TypeValue   // an interface, a struct, a pointer...: Type is its dynamic type
	NilValue    = records.NilValue    // a nil interface, pointer, function or map
)

// MaxValueString is the most bytes of a string value a trace keeps.
const MaxValueString = wire.MaxValueString

// MaxSpanName bounds the bytes of a span's name the trace keeps.
const MaxSpanName = records.MaxSpanName

// SpanLabel is the key of the runtime/pprof label with which a program
// that records its spans labels its goroutines while a span is open: its
// value is the span's id in hex, so that a CPU profile's samples say which
// span, and request, they were taken for.
const SpanLabel = records.SpanLabel

// Ends are the errors that mean the end of something rather than a
// failure: io.EOF, the normal end of input; fs.SkipDir and fs.SkipAll,
// which end a walk early on purpose; http.ErrServerClosed, how Serve
// returns after Shutdown. calltrail shows them as it shows any error,
// but does not count a call returning one as failed.
var Ends = records.Ends

// The reasons a function of an instrumented package is left untraced,
// as an Omitted's Why says them.
const (
	WhyInlined   = records.WhyInlined // to keep a value off the heap
	WhyFuncs     = records.WhyFuncs
	WhyExclude   = records.WhyExclude
	WhyIgnored   = records.WhyIgnored
	WhyNosplit   = records.WhyNosplit
	WhyGenerated = records.WhyGenerated
	WhyNoBody    = records.WhyNoBody
)
