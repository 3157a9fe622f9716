package calltrail

import (
	"io"
	"time"
)

// A FlightRecorder traces the program into memory rather than a file,
// keeping its most recent calls, for a program to write out when
// something worth a look happens: the programmatic form of
// CALLTRAIL_MODE=flight, as runtime/trace's FlightRecorder is of the
// execution tracer. A process has one trace: a FlightRecorder is a
// handle on it, and Start fails if the program is traced already.
type FlightRecorder struct {
	o Options
}

// NewFlightRecorder makes a flight recorder that keeps its calls within
// o.Buffer bytes (32 MiB by default): a quarter for the rings that take
// calls as they are made, the rest for the window, its oldest calls let
// go as new ones come.
func NewFlightRecorder(o Options) *FlightRecorder { return &FlightRecorder{o} }

// Start starts recording into memory. It fails with ErrStarted if the
// program is traced already. Without the calltrail build tag it does
// nothing and returns nil; Enabled then reports false.
func (fr *FlightRecorder) Start() error {
	if !Enabled {
		return nil
	}
	o := fr.o.options()
	o.flight = true
	return begin(o, discard{}, nil, nil, false)
}

// Enabled reports whether the program's flight recorder is running:
// started by this FlightRecorder or by the environment, and not stopped.
func (fr *FlightRecorder) Enabled() bool { return flying() && !tr.w.closed() }

// WriteTo writes a trace of the window, the program's most recent calls,
// to w, as Snapshot does, and returns how many bytes it wrote.
func (fr *FlightRecorder) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	_, err := Snapshot(cw)
	return cw.n, err
}

// WriteLast is WriteTo for the last d of the window only.
func (fr *FlightRecorder) WriteLast(w io.Writer, d time.Duration) (int64, error) {
	cw := &countingWriter{w: w}
	_, err := SnapshotLast(cw, d)
	return cw.n, err
}

// Stop stops the flight recorder, as Stop stops tracing: no call is
// recorded after it, and the window can no longer be written.
func (fr *FlightRecorder) Stop() { Stop() }

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
