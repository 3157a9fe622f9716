package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/calltrail/calltrail/store"
)

func pushVerb() *verb {
	var (
		to, service string
		labels      labelList
		sf          spanFlags
	)
	return &verb{
		name:    "push",
		args:    "--to clickhouse://HOST:PORT/DB[?cluster=NAME]|otlp://HOST:PORT [--service NAME] [--label KEY=VALUE]... TRACE...",
		summary: "store traces in ClickHouse, for report, chains, diff and flame --from over many processes; or send spans to OpenTelemetry",
		flags: func(fs *flag.FlagSet) {
			to, service, labels = "", "", nil
			fs.StringVar(&to, "to", "", "the store: `clickhouse://HOST:PORT/DB`, with ?cluster=NAME for tables over the shards of a cluster; or an OTLP/HTTP receiver, otlp://HOST:PORT, for spans")
			sf.register(fs, "with otlp://")
			fs.StringVar(&service, "service", "", "the service the traces came from (default: each trace's program)")
			fs.Var(&labels, "label", "a label of the traces, `KEY=VALUE` (repeat for more): version, host, run")
		},
		run: func(sess *session, _ *flag.FlagSet, args []string) (err error) {
			if to == "" {
				return usageError{"name the store: --to clickhouse://HOST:PORT/DB"}
			}
			if len(args) == 0 {
				return usageError{"name the traces to push"}
			}
			for _, a := range args {
				if _, err := os.Stat(a); err != nil {
					return err
				}
			}
			if strings.HasPrefix(to, "otlp://") || strings.HasPrefix(to, "otlps://") {
				o, err := sf.options(nil)
				if err != nil {
					return err
				}
				o.Service, o.Labels = service, map[string]string{}
				for _, l := range labels {
					k, v, _ := store.ParseLabel(l) // the flag checked it
					o.Labels[k] = v
				}
				return sess.pushSpans(to, o, args)
			}
			if sf != (spanFlags{}) {
				return usageError{"--spans, --slower and --failed choose spans for otlp://; ClickHouse stores every call"}
			}
			ctx, done := interruptible()
			defer func() { err = done(err) }()
			s, err := openForPush(ctx, to)
			if err != nil {
				return err
			}
			defer s.Close()
			tty := isTerminal(os.Stderr)
			for _, a := range args {
				var progress func(done, size int64)
				if tty {
					progress = func(done, size int64) {
						fmt.Fprintf(sess.errOut, "\r%s %s", bar(done, size), a)
					}
				}
				t0 := time.Now()
				p, err := s.Push(ctx, a, store.Meta{Service: service, Labels: labels}, progress)
				if tty {
					fmt.Fprintf(sess.errOut, "\r\033[K")
				}
				if err != nil {
					if ctx.Err() != nil {
						left := ""
						if errors.Is(err, store.ErrRowsLeft) {
							left = "; " + store.ErrRowsLeft.Error() + " (docs/store.md says how to drop them)"
						}
						fmt.Fprintf(sess.errOut, "calltrail: %s: interrupted before its commit: nothing stored%s\n", a, left)
					}
					return err
				}
				if p.Warning != "" {
					fmt.Fprintf(sess.errOut, "calltrail: warning: %s: %s; pushed the calls before that point\n", a, p.Warning)
				}
				if p.Already {
					fmt.Fprintf(sess.errOut, "calltrail: %s: in the store already (trace %s): nothing pushed\n", a, p.Trace)
					continue
				}
				el := time.Since(t0)
				fmt.Fprintf(sess.errOut, "calltrail: %s: pushed %d calls in %s (%.0f calls/s), trace %s\n", a, p.Calls, el.Round(time.Millisecond), float64(p.Calls)/el.Seconds(), p.Trace)
			}
			return nil
		},
	}
}
