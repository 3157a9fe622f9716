package text

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/calltrail/calltrail/diagnose"
	"github.com/calltrail/calltrail/internal/indented"
	"github.com/calltrail/calltrail/internal/words"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/tracefile"
)

// Duration writes ns nanoseconds rounded as every table does: 1.23ms.
func Duration(ns int64) string { return indented.Round(time.Duration(ns)).String() }

// Findings prints findings as numbered paragraphs, and a blank line.
func Findings(w io.Writer, fs []diagnose.Finding) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintln(w, "Findings:")
	for i, f := range fs {
		fmt.Fprintf(w, "%d. %s\n", i+1, f.Message)
	}
	fmt.Fprintln(w)
}

// Report prints functions as a table, with the on-CPU, tracing and
// waiting split when split is set.
func Report(w io.Writer, funcs []query.Function, split bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "self\ttotal\tcalls\tmean\tp50\tp99\tmax\tpanics\terrors\t"
	if split {
		head += "cpu\ttracing\twait\t"
	}
	fmt.Fprintf(tw, "%s\tfunction\n", head)
	for _, f := range funcs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t", Duration(f.SelfNs), Duration(f.TotalNs), f.Calls,
			Duration(f.MeanNs), Duration(f.P50Ns), Duration(f.P99Ns), Duration(f.MaxNs), f.Panics, f.Errors)
		name := f.Name
		if split {
			var cpu, tracing, wait int64
			if f.CPUNs != nil {
				cpu, tracing, wait = *f.CPUNs, *f.TracingNs, *f.WaitNs
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t", Duration(cpu), Duration(tracing), Duration(wait))
			if f.Mostly != "" {
				name += " (" + f.Mostly + ")"
			}
		}
		fmt.Fprintf(tw, "\t%s\n", name)
	}
	tw.Flush()
}

// Chains prints chains, each with up to messages of its errors'
// messages (all, if negative).
func Chains(w io.Writer, chains []query.Chain, messages int) {
	if len(chains) == 0 {
		fmt.Fprintln(w, "no calls")
		return
	}
	for i, c := range chains {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n", query.Text(c.Path, " -> "))
		for _, s := range c.SpawnedFrom {
			fmt.Fprintf(w, "  in goroutines started from %s\n", query.Text(s, " -> "))
		}
		fmt.Fprintf(w, "  %s, total %s, mean %s, max %s", words.Count(c.Calls, "call"), Duration(c.TotalNs), Duration(c.MeanNs), Duration(c.MaxNs))
		if c.Panics > 0 {
			fmt.Fprintf(w, ", %d panicked", c.Panics)
		}
		if c.Errors > 0 {
			fmt.Fprintf(w, ", %d failed", c.Errors)
		}
		fmt.Fprintln(w)
		for i, m := range c.Messages {
			if i == messages {
				fmt.Fprintf(w, "    and %d more errors (chains --errors lists them)\n", len(c.Messages)-i)
				break
			}
			fmt.Fprintf(w, "    %d× %s\n", m.Calls, m.Error)
		}
		for _, in := range c.Slowest {
			note := ""
			if in.Exit != "" {
				note = " (" + in.Exit + ")"
			}
			if in.Error != nil {
				note += " err=" + in.Error.String()
			}
			fmt.Fprintf(w, "    g[%02d] at %s: %s%s\n", in.G, Duration(in.StartNs), Duration(in.DurationNs), note)
		}
	}
}

// Diff prints the changes of what, function or chain, as a table. The
// largest change comes first; the change of each call's time, beside it,
// tells a function made slower (×38) from one whose many calls
// wandered with the machine's load (-4%).
func Diff(w io.Writer, what string, cs []query.Change) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "base\tnew\tchange\ta call\tbase calls\tnew calls\t\t%s\n", what)
	for _, c := range cs {
		note := ""
		switch {
		case c.Appeared:
			note = " (new)"
		case c.Vanished:
			note = " (gone)"
		}
		sign, d := "+", c.DeltaNs
		if d < 0 {
			sign, d = "-", -d
		}
		name := c.Name
		if name == "" {
			name = query.Text(c.Chain, " -> ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%s\t%s\t%d\t%d\t\t%s%s\n", Duration(c.BaseNs), Duration(c.NewNs), sign, Duration(d), perCall(c), c.BaseCalls, c.NewCalls, name, note)
	}
	tw.Flush()
}

// perCall writes how the time of a call changed: "×38" for 38 times as
// long, "-4%" for a little shorter; "" where either trace has none.
func perCall(c query.Change) string {
	if c.BaseCalls == 0 || c.NewCalls == 0 || c.BaseNs <= 0 || c.NewNs <= 0 {
		return ""
	}
	r := float64(c.NewNs) / float64(c.NewCalls) / (float64(c.BaseNs) / float64(c.BaseCalls))
	switch {
	case r >= 10:
		return fmt.Sprintf("×%.0f", r)
	case r >= 2:
		return fmt.Sprintf("×%.1f", r)
	}
	return fmt.Sprintf("%+.0f%%", 100*(r-1))
}

// ErrorDiff prints the functions whose share of failed calls changed.
func ErrorDiff(w io.Writer, cs []query.Change) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "base failed\tnew failed\tchange\t\tfunction (share of calls failed)\n")
	for _, c := range cs {
		b, a := c.ErrorRate()
		fmt.Fprintf(tw, "%d/%d %.1f%%\t%d/%d %.1f%%\t%+.1f pts\t\t%s\n", c.BaseErrors, c.BaseCalls, 100*b, c.NewErrors, c.NewCalls, 100*a, 100*(a-b), c.Name)
	}
	tw.Flush()
}

// Goroutines prints the summary of a trace's goroutines, over its
// duration.
func Goroutines(w io.Writer, duration time.Duration, g query.Goroutines) {
	fmt.Fprintf(w, "%s ran traced code over %s; at most %d at one instant\n", words.Count(g.Count, "goroutine"), Duration(int64(duration)), g.MaxLive)
	fmt.Fprintf(w, "lifetime:     p50 %s, p90 %s, max %s\n", Duration(int64(g.Lifetime.P50)), Duration(int64(g.Lifetime.P90)), Duration(int64(g.Lifetime.Max)))
	fmt.Fprintf(w, "traced work:  p50 %s, p90 %s, max %s\n", Duration(int64(g.Work.P50)), Duration(int64(g.Work.P90)), Duration(int64(g.Work.Max)))
	if len(g.Live) > 0 {
		top := slices.Max(g.Live)
		fmt.Fprintf(w, "alive:        %s  (0 to %d alive within a column of %s)\n", sparkline(g.Live, top), top, Duration(int64(g.Slice)))
	}
	if len(g.StartedBy) == 0 {
		return
	}
	fmt.Fprintf(w, "\nstarted by:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "goroutines\tcalls\tper call\t  chain\n")
	for _, s := range g.StartedBy {
		fmt.Fprintf(tw, "%d\t%d\t%.1f\t  %s\n", s.Goroutines, s.Calls, s.PerCall, query.Text(s.Chain, " → "))
	}
	tw.Flush()
}

// sparkline draws counts as a row of block characters, the tallest for
// top.
func sparkline(counts []int, top int) string {
	const bars = "▁▂▃▄▅▆▇█"
	levels := []rune(bars)
	var b strings.Builder
	for _, c := range counts {
		switch {
		case c == 0:
			b.WriteRune(' ')
		default:
			b.WriteRune(levels[min((c*len(levels)-1)/max(top, 1), len(levels)-1)])
		}
	}
	return b.String()
}

// Info prints what a trace is, a row each: program, Go, duration,
// goroutines, calls, drops, size, clock, end, and whether every event
// was read (scanned; damaged when reading stopped at damage) or the
// summary the trace ends with.
func Info(w io.Writer, name string, s tracefile.Summary, scanned, damaged bool) {
	m := s.Meta
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, a...)...) }
	row("file", "%s (format version %d)", name, s.Version)
	row("program", "%s", strings.TrimSpace(m.Path+" "+m.Args))
	if m.Package != "" {
		row("package", "%s", m.Package)
	}
	row("go", "%s %s/%s, GOMAXPROCS %d", m.Go, m.GOOS, m.GOARCH, m.GOMAXPROCS)
	if !m.Start.IsZero() {
		row("started", "%s", m.Start.Format("2006-01-02 15:04:05.000 MST"))
	}
	if m.Snapshot() {
		// A flight recorder's window: calls from its start on, and
		// the calls open at its start, which began before it and count
		// from it.
		w := m.Window
		row("window", "%s, from %s to %s after tracing started (flight recorder); %d calls open at its start, counted from it", indented.Round(w.End-w.Start), indented.Round(w.Start), indented.Round(w.End), w.Open)
	} else {
		row("duration", "%s", indented.Round(s.Duration))
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
	if s.Stats.LostErrors > 0 {
		row("lost", "%d errors, arguments or results of recorded calls, for want of room", s.Stats.LostErrors)
	}
	if h := heldUp(s); h != "" {
		row("held up", "%s", h)
	}
	perCall := "-"
	if s.Calls > 0 {
		perCall = fmt.Sprintf("%.2f", float64(s.Bytes)/float64(s.Calls))
	}
	row("size", "%d bytes, %s bytes per call", s.Bytes, perCall)
	row("clock", "%s; goroutine ids from %s; parents %s", m.Clock, goidSource(m.Goid), known(m.Parents))
	end := s.End
	if end == "" {
		end = "no end record: the program was killed, is still running, or called os.Exit without calltrail's exit hook (calltrail build, run and test link it)"
	}
	row("ended", "%s", end)
	switch {
	case scanned && damaged:
		row("read", "every event up to the damage")
	case scanned:
		row("read", "every event")
	default:
		row("read", "the summary the trace ends with (--scan reads every event)")
	}
	tw.Flush()
}

func goidSource(s string) string {
	if s == "g" {
		return "the runtime's g"
	}
	return "runtime.Stack (slow fallback)"
}

func known(b bool) string {
	if b {
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
	case s.Meta.Full == "drop":
		return "never: CALLTRAIL_FULL=drop dropped calls instead of waiting"
	case s.Meta.Full == "":
		return ""
	case s.Stats.Waits == 0:
		return "never: no goroutine waited for the trace writer"
	}
	return fmt.Sprintf("%s, summed over goroutines, in %d waits for the trace writer (rings full)", indented.Round(time.Duration(s.Stats.HeldNs)), s.Stats.Waits)
}
