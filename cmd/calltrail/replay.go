package main

import (
	"flag"
	"io"

	"github.com/calltrail/calltrail/replay"
)

func init() {
	var ff filterFlags
	var opts replay.Options
	register(&verb{
		name:    "replay",
		args:    "[-g GID] [-F REGEX] [-N REGEX] [-D DEPTH] [-t DURATION] [-parents] [FILE]",
		summary: "print the call tree of each goroutine, with durations",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			opts = replay.Options{}
			fs.BoolVar(&opts.Parents, "parents", false, "before each goroutine, say which goroutine created it, where")
		},
		run: func(_ *flag.FlagSet, args []string) error {
			name, f, err := ff.traceAndFilter(args)
			if err != nil {
				return err
			}
			file, r, err := openTrace(name)
			if err != nil {
				return err
			}
			defer file.Close()
			if err := replay.Write(out, r, f, opts); err != nil && err != io.EOF {
				return readError(name, err)
			}
			warnIncomplete(name, r)
			return nil
		},
	})
}
