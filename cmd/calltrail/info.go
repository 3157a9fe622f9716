package main

import (
	"flag"
	"fmt"
	"github.com/calltrail/calltrail/internal/words"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/calltrail/calltrail/internal/indented"
	"github.com/calltrail/calltrail/tracefile"
)

func infoVerb() *verb {
	return &verb{
		name:    "info",
		args:    "[FILE]",
		summary: "describe a trace: program, Go version, duration, goroutines, calls, drops, size",
		run: func(_ *flag.FlagSet, args []string) error {
			name, err := traceArg(args)
			if err != nil {
				return err
			}
			return readTrace(name, func(r *tracefile.Reader) error {
				s, err := tracefile.Summarize(r)
				if err == nil || tracefile.IsIncomplete(err) {
					printInfo(name, s)
				}
				return err
			})
		},
	}
}

func printInfo(name string, s tracefile.Summary) {
	m := s.Meta
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, a...)...) }
	row("file", "%s (format version %d)", name, s.Version)
	row("program", "%s %s", m["path"], m["args"])
	if m["package"] != "" {
		row("package", "%s", m["package"])
	}
	row("go", "%s %s/%s, GOMAXPROCS %s", m["go"], m["goos"], m["goarch"], m["gomaxprocs"])
	if t, err := time.Parse(time.RFC3339Nano, m["start"]); err == nil {
		row("started", "%s", t.Format("2006-01-02 15:04:05.000 MST"))
	}
	row("duration", "%s", indented.Round(s.Duration))
	if m["mode"] == "flight" && m["window_start_ns"] != "" {
		// A flight recorder's window: calls from its start on, and
		// the calls open at its start, which began before it.
		from, _ := strconv.ParseInt(m["window_start_ns"], 10, 64)
		to, _ := strconv.ParseInt(m["window_end_ns"], 10, 64)
		row("window", "%s, from %s to %s after tracing started (flight recorder); %s calls open at its start", indented.Round(time.Duration(to-from)), indented.Round(time.Duration(from)), indented.Round(time.Duration(to)), m["window_open_calls"])
	}
	row("goroutines", "%d", s.Goroutines)
	row("functions", "%d called, of %d in the trace's table", s.Called, s.Funcs)
	row("calls", "%d (%d left by panic, %d unfinished)", s.Calls, s.Panics, s.Unfinished)
	total := s.Calls + s.Stats.DroppedCalls
	pct := 0.0
	if total > 0 {
		pct = 100 * float64(s.Stats.DroppedCalls) / float64(total)
	}
	row("dropped", "%s (%.2f%%)", words.Count(s.Stats.DroppedCalls, "call"), pct)
	if h := heldUp(s); h != "" {
		row("held up", "%s", h)
	}
	perCall := "-"
	if s.Calls > 0 {
		perCall = fmt.Sprintf("%.2f", float64(s.Bytes)/float64(s.Calls))
	}
	row("size", "%d bytes, %s bytes per call", s.Bytes, perCall)
	row("clock", "%s; goroutine ids from %s; parents %s", m["clock"], goidSource(m["goid"]), known(m["parents"]))
	end := s.End
	if end == "" {
		end = "no end record: the program was killed or is still running"
	}
	row("ended", "%s", end)
	tw.Flush()
}

func goidSource(s string) string {
	if s == "g" {
		return "the runtime's g"
	}
	return "runtime.Stack (slow fallback)"
}

func known(s string) string {
	if s == "true" {
		return "recorded"
	}
	return "not available"
}

// heldUp says how long the traced program waited for the trace writer
// when its rings were full: the time tracing added to the program's own,
// beyond the cost of each call. It is empty for traces written before
// the runtime waited.
func heldUp(s tracefile.Summary) string {
	switch {
	case s.Meta["full"] == "drop":
		return "never: CALLTRAIL_FULL=drop dropped calls instead of waiting"
	case s.Meta["full"] == "":
		return ""
	case s.Stats.Waits == 0:
		return "never: no goroutine waited for the trace writer"
	}
	return fmt.Sprintf("%s, summed over goroutines, in %d waits for the trace writer (rings full)", indented.Round(time.Duration(s.Stats.HeldNs)), s.Stats.Waits)
}
