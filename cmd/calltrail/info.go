package main

import (
	"flag"

	"github.com/calltrail/calltrail/internal/text"
	"github.com/calltrail/calltrail/tracefile"
)

func infoVerb() *verb {
	return &verb{
		name:    "info",
		args:    "[FILE]",
		summary: "describe a trace: program, Go version, duration, goroutines, calls, drops, size",
		run: func(sess *session, _ *flag.FlagSet, args []string) error {
			name, err := traceArg(args)
			if err != nil {
				return err
			}
			return sess.readTrace(name, func(r *tracefile.Reader) error {
				s, err := tracefile.Summarize(r)
				if err == nil || tracefile.IsIncomplete(err) {
					text.Info(sess.out, name, s)
				}
				return err
			})
		},
	}
}
