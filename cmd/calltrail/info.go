package main

import (
	"flag"

	"github.com/calltrail/calltrail/internal/text"
	"github.com/calltrail/calltrail/tracefile"
)

func infoVerb() *verb {
	var scan bool
	return &verb{
		name:    "info",
		args:    "[--scan] [FILE]",
		summary: "describe a trace: program, Go version, duration, goroutines, calls, drops, size",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&scan, "scan", false, "read every event, checking the whole trace, rather than the summary it ends with")
		},
		run: func(sess *session, _ *flag.FlagSet, args []string) error {
			name, err := traceArg(args)
			if err != nil {
				return err
			}
			if !scan {
				// A trace whose tracing ended says what info shows in
				// its last chunk: no need to read its calls.
				f, err := tracefile.Open(name)
				if err != nil {
					return err
				}
				s, ok := f.Summary()
				f.Close()
				if ok {
					text.Info(sess.out, name, s, false, false)
					return sess.told(name, s.Health())
				}
			}
			return sess.readTrace(name, nil, func(r *tracefile.Reader) error {
				r.ReadAhead() // decoding on one core, counting on another
				s, err := tracefile.Summarize(r)
				if err != nil && s.End == "" {
					// Damage that stopped the scan may lie before an
					// end record, which the summary after it holds.
					if f, ferr := tracefile.Open(name); ferr == nil {
						if sum, ok := f.Summary(); ok && sum.End != "" {
							s.End = sum.End + ", as the summary the trace ends with says (the scan stopped at the damage)"
						}
						f.Close()
					}
				}
				if err == nil || tracefile.IsIncomplete(err) {
					text.Info(sess.out, name, s, true, err != nil)
				}
				return err
			})
		},
	}
}
