package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/calltrail/calltrail/live"
	"github.com/calltrail/calltrail/tracefile"
)

func recordVerb() *verb {
	var (
		output  string
		seconds float64
		last    time.Duration
		cpu     bool
	)
	return &verb{
		name:    "record",
		args:    "[-o FILE] [--seconds N [--cpu] | --last D] ADDR",
		summary: "take a trace from a running program's control endpoint (CALLTRAIL_HTTP, or live.Register)",
		more: "Without --seconds, the trace is the flight recorder's window: the program's last calls. With\n" +
			"--seconds N, it is the calls of the next N seconds; a paused program (CALLTRAIL=paused) is\n" +
			"switched on for them and off again. ADDR is host:port or a URL; CALLTRAIL_HTTP_TOKEN, if set,\n" +
			"is sent as the endpoint's token. Every verb reads the result as any trace.",
		flags: func(fs *flag.FlagSet) {
			output, seconds, last, cpu = "calltrail.out", 0, 0, false
			fs.StringVar(&output, "o", "calltrail.out", "write the trace to `FILE`")
			fs.Float64Var(&seconds, "seconds", 0, "capture the next `N` seconds instead of taking the window")
			fs.DurationVar(&last, "last", 0, "take only the last `D` of the window (5s)")
			fs.BoolVar(&cpu, "cpu", false, "with --seconds, take the Go runtime's CPU profile of that time too (on-CPU and waiting time per function)")
		},
		run: func(sess *session, fs *flag.FlagSet, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Sprintf("want one address, got %d arguments", len(args))}
			}
			set := map[string]bool{}
			fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
			if seconds < 0 || seconds > live.MaxCapture || set["seconds"] && seconds == 0 {
				return usageError{fmt.Sprintf("--seconds %g: want more than 0 and at most %d", seconds, live.MaxCapture)}
			}
			if last < 0 || set["last"] && last == 0 {
				return usageError{fmt.Sprintf("--last %v: want more than 0 (without --last, the whole window)", last)}
			}
			if set["seconds"] && set["last"] {
				return usageError{"--seconds captures the time to come, --last takes the end of the window: one or the other"}
			}
			if cpu && seconds == 0 {
				return usageError{"--cpu goes with --seconds: a profile can be taken of the time to come only"}
			}
			if err := replaceable(output, "-o "+output); err != nil {
				return err
			}
			if err := writable(output, "-o "+output); err != nil {
				return err
			}
			q := url.Values{}
			path := "snapshot"
			switch {
			case seconds > 0:
				path = "capture"
				q.Set("seconds", strconv.FormatFloat(seconds, 'g', -1, 64))
				if cpu {
					q.Set("profiles", "cpu")
				}
			case last > 0:
				q.Set("last", last.String())
			}
			data, err := fetchEndpoint(context.Background(), args[0], path, q, time.Duration(seconds*float64(time.Second))+time.Minute)
			if err != nil {
				return err
			}
			// Check what came before writing it: a trace, whole.
			r, err := tracefile.NewReader(bytes.NewReader(data))
			var sum tracefile.Summary
			if err == nil {
				sum, err = tracefile.Summarize(r)
			}
			if err != nil {
				return fmt.Errorf("%s did not send a whole trace: %v", args[0], err)
			}
			if err := writeFile(output, data); err != nil {
				return err
			}
			if w := shortWindow(r.Meta(), time.Duration(seconds*float64(time.Second))); w != "" {
				fmt.Fprintf(sess.errOut, "calltrail: warning: %s\n", w)
			}
			if sum.Calls == 0 {
				fmt.Fprintf(sess.errOut, "calltrail: warning: the trace holds no call: the program made no traced call in its window\n")
			}
			fmt.Fprintf(sess.errOut, "calltrail: trace written to %s (%d bytes); next: calltrail chains FUNC %s, calltrail serve %s\n", output, len(data), output, output)
			return nil
		},
	}
}

// shortWindow says, when a capture of asked holds less of it than a
// tenth short, what it holds and why; "" when it holds it all, or for a
// trace that is no capture.
func shortWindow(m tracefile.Meta, asked time.Duration) string {
	got := m.Window.End - m.Window.Start
	if asked <= 0 || m.Window.End == 0 || got >= asked-asked/10 {
		return ""
	}
	return fmt.Sprintf("the trace holds the last %v of the %v asked: the program's memory for its calls kept no more (CALLTRAIL_BUFFER sets it: a larger one keeps more)", got.Round(time.Millisecond), asked)
}

// maxBody bounds what an endpoint may send; tests make it small.
var maxBody int64 = live.DefaultMaxBody

// fetchEndpoint asks the endpoint at addr for path, as live.Client does,
// with CALLTRAIL_HTTP_TOKEN's token.
func fetchEndpoint(ctx context.Context, addr, path string, q url.Values, timeout time.Duration) ([]byte, error) {
	c := live.Client{Addr: addr, Token: os.Getenv("CALLTRAIL_HTTP_TOKEN"), Timeout: timeout, MaxBody: maxBody}
	data, err := c.Fetch(ctx, path, q)
	if errors.Is(err, live.ErrAddr) {
		return nil, usageError{err.Error()}
	}
	return data, err
}
