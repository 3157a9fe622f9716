package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/text"
	"github.com/calltrail/calltrail/live"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/tracefile"
)

func topVerb() *verb {
	var (
		n     int
		every time.Duration
		count int
		key   string
	)
	return &verb{
		name:    "top",
		args:    "[-n N] [--every D] [--sort KEY] [--count N] ADDR",
		summary: "the busiest functions of a running program, refreshed every second, like top for calls",
		more: "ADDR is a program's control endpoint (CALLTRAIL_HTTP, or live.Register) with the flight\n" +
			"recorder on. Each refresh analyses the program's last --every of calls: calls per second, self\n" +
			"and total time per second of wall time, p99 of a call. CALLTRAIL_HTTP_TOKEN is sent as the token.",
		live: true,
		flags: func(fs *flag.FlagSet) {
			n, every, count, key = 20, time.Second, 0, "self"
			fs.IntVar(&n, "n", 20, "show the first `N` functions")
			fs.DurationVar(&every, "every", time.Second, "refresh every `D`")
			fs.StringVar(&key, "sort", "self", "order by `KEY`: "+strings.Join(query.SortKeys, ", "))
			fs.IntVar(&count, "count", 0, "stop after `N` refreshes (0: until interrupted)")
		},
		run: func(sess *session, _ *flag.FlagSet, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Sprintf("want one address, got %d arguments", len(args))}
			}
			if every < 100*time.Millisecond {
				return usageError{"--every: want at least 100ms"}
			}
			if !contains(query.SortKeys, key) {
				return usageError{fmt.Sprintf("--sort %q: want one of %s", key, strings.Join(query.SortKeys, ", "))}
			}
			tty := isTerminal(os.Stdout)
			for i := 0; count == 0 || i < count; i++ {
				if i > 0 {
					time.Sleep(every)
				}
				data, err := fetchEndpoint(context.Background(), args[0], "snapshot", url.Values{"last": {every.String()}}, time.Minute)
				if err != nil {
					return err
				}
				var buf bytes.Buffer
				calls, err := writeTop(&buf, args[0], data, key, n)
				if err != nil {
					return err
				}
				if calls == 0 && paused(args[0]) {
					// No call: a program idle, or not recording, which
					// a table of nothing would not say.
					fmt.Fprintf(&buf, "\nrecording is off in %s (CALLTRAIL=paused, or switched off): calltrail record --seconds N %s records N seconds of it; POST to %s%son switches it on\n", args[0], args[0], args[0], live.Prefix)
				}
				if tty {
					sess.out.Write([]byte("\x1b[H\x1b[2J")) // home, clear
				} else if i > 0 {
					sess.out.Write([]byte("\n"))
				}
				sess.out.Write(buf.Bytes())
			}
			return nil
		},
	}
}

// paused reports whether the program at addr says it is not recording.
func paused(addr string) bool {
	data, err := fetchEndpoint(context.Background(), addr, "counters", nil, 10*time.Second)
	var c live.Counters
	return err == nil && json.Unmarshal(data, &c) == nil && !c.Recording
}

// writeTop analyses a snapshot of the last seconds and writes its table:
// per function, calls and times per second of the window. It returns
// how many calls began in the window.
func writeTop(w *bytes.Buffer, addr string, data []byte, key string, n int) (uint64, error) {
	r, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		return 0, fmt.Errorf("%s did not send a trace: %v", addr, err)
	}
	m := r.Meta()
	from, to, open := m.Window.Start, m.Window.End, m.Window.Open
	secs := max((to - from).Seconds(), 1e-3)
	// The calls that started in the window: those open at its start
	// began before it, and their whole time would not be per second.
	p := analysis.Analyze(r, analysis.Options{Filter: &filter.Filter{From: from}})
	if p.Err != nil {
		return 0, fmt.Errorf("%s sent a damaged trace: %v", addr, p.Err)
	}
	t := query.New(addr, p)
	calls := r.Calls() - min(open, r.Calls())
	fmt.Fprintf(w, "calltrail top %s: %s, pid %d, the last %s at %s; %d calls (%.0f a second), %d dropped since the start\n\n",
		addr, m.Program, m.PID, (to - from).Round(time.Millisecond), time.Now().Format("15:04:05"),
		calls, float64(calls)/secs, r.Stats().DroppedCalls)
	// The order's key is always a column: --sort mean or errors
	// ordered by figures the table did not show.
	fs := t.Functions(key, n)
	mean, errs := key == "mean", key == "errors"
	for _, f := range fs {
		errs = errs || f.Errors > 0
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "calls/s\tself/s\ttotal/s\t"
	if mean {
		head += "mean\t"
	}
	head += "p99\tmax\t"
	if errs {
		head += "errors/s\t"
	}
	fmt.Fprint(tw, head+"\tfunction\n")
	for _, f := range fs {
		fmt.Fprintf(tw, "%.0f\t%s\t%s\t", float64(f.Calls)/secs, text.Duration(int64(float64(f.SelfNs)/secs)), text.Duration(int64(float64(f.TotalNs)/secs)))
		if mean {
			fmt.Fprintf(tw, "%s\t", text.Duration(f.MeanNs))
		}
		fmt.Fprintf(tw, "%s\t%s\t", text.Duration(f.P99Ns), text.Duration(f.MaxNs))
		if errs {
			fmt.Fprintf(tw, "%.0f\t", float64(f.Errors)/secs)
		}
		fmt.Fprintf(tw, "\t%s\n", f.Name)
	}
	return calls, tw.Flush()
}

// isTerminal reports whether f is a terminal: for top to redraw in place,
// and for export to refuse to write binary to it. A character device
// other than the null device (/dev/null, which is one too) is taken for
// a terminal.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(st, null)
}
