package tracefile

import (
	"strconv"
	"time"
)

// Meta is what the runtime writes of the traced program at the start of
// a trace, read once into its types: every reader asks it, rather than
// parsing the metadata chunk's strings again.
type Meta struct {
	Program    string    // the binary's name
	Path       string    // the binary's path, or what calltrail run built
	Args       string    // the program's arguments, separated by spaces
	Package    string    // the main package's import path, when the build recorded it
	Go         string    // the Go release the program was built with
	GOOS       string    //
	GOARCH     string    //
	GOMAXPROCS int       //
	PID        int       // the process, 0 if not said
	Start      time.Time // when tracing started; zero if not said
	// Clock is the clock of the times (tsc or mono); Goid how goroutine
	// ids were read ("g", the runtime's, or "stack", runtime.Stack);
	// Parents whether goroutines' parents were.
	Clock   string
	Goid    string
	Parents bool
	// Full is what the program did when a ring was full: wait, drop, or
	// "" for traces written before the runtime could wait.
	Full string
	// Mode is "flight" for a flight recorder's trace, "" for a whole
	// run's; Window, for a flight recorder's snapshot, the window it
	// holds.
	Mode   string
	Window Window
	// Keys holds every key and value as the runtime wrote them, those
	// above included: what a newer runtime adds is kept.
	Keys map[string]string
}

// Window is the span of a flight recorder's snapshot: its calls from
// Start to End after tracing started, and Open calls open at Start,
// which began before it.
type Window struct {
	Start, End time.Duration
	Open       uint64
}

// Snapshot reports whether the trace is a flight recorder's window
// rather than a whole run.
func (m Meta) Snapshot() bool { return m.Mode == "flight" && m.Keys["window_start_ns"] != "" }

// parseMeta reads the metadata chunk's strings. A value that does not
// parse is left at its zero: metadata describes, it does not decide.
func parseMeta(kv map[string]string) Meta {
	m := Meta{
		Program: kv["program"], Path: kv["path"], Args: kv["args"], Package: kv["package"],
		Go: kv["go"], GOOS: kv["goos"], GOARCH: kv["goarch"],
		Clock: kv["clock"], Goid: kv["goid"], Parents: kv["parents"] == "true",
		Full: kv["full"], Mode: kv["mode"], Keys: kv,
	}
	m.GOMAXPROCS, _ = strconv.Atoi(kv["gomaxprocs"])
	m.PID, _ = strconv.Atoi(kv["pid"])
	if t, err := time.Parse(time.RFC3339Nano, kv["start"]); err == nil {
		m.Start = t
	}
	start, _ := strconv.ParseInt(kv["window_start_ns"], 10, 64)
	end, _ := strconv.ParseInt(kv["window_end_ns"], 10, 64)
	m.Window.Start, m.Window.End = time.Duration(start), time.Duration(end)
	m.Window.Open, _ = strconv.ParseUint(kv["window_open_calls"], 10, 64)
	return m
}
