package main

import (
	"flag"
	"io"
	"time"

	"github.com/calltrail/calltrail/replay"
	"github.com/calltrail/calltrail/tracefile"
)

func replayVerb() *verb {
	var ff filterFlags
	var opts replay.Options
	return &verb{
		name:    "replay",
		args:    "[-g GID] [-F REGEX] [-N REGEX] [-D DEPTH] [-t DURATION] [-parents] [FILE]",
		summary: "print the call tree of each goroutine, with durations",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			opts = replay.Options{}
			fs.BoolVar(&opts.Parents, "parents", false, "before each goroutine, say which goroutine created it, where")
		},
		run: func(sess *session, _ *flag.FlagSet, args []string) error {
			name, f, err := ff.traceAndFilter(sess, args)
			if err != nil {
				return err
			}
			return sess.readTrace(name, f, func(r *tracefile.Reader) error {
				r.ReadAhead()
				if err := replay.Write(sess.out, r, f, opts); err != nil && err != io.EOF {
					return err
				}
				if err := pastEnd("", f, time.Duration(r.MaxTime())); err != nil { // readTrace names the trace
					return err
				}
				return focusMatched(r, ff.get("F"), f)
			})
		},
	}
}
