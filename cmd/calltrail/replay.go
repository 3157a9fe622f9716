package main

import (
	"flag"
	"io"

	"github.com/calltrail/calltrail/replay"
)

func init() {
	var ff filterFlags
	register(&verb{
		name:    "replay",
		args:    "[-g GID] [-F REGEX] [-N REGEX] [-D DEPTH] [-t DURATION] [FILE]",
		summary: "print the call tree of each goroutine, with durations",
		flags:   ff.register,
		run: func(_ *flag.FlagSet, args []string) error {
			name, err := traceArg(args)
			if err != nil {
				return err
			}
			f, err := ff.filter()
			if err != nil {
				return err
			}
			file, r, err := openTrace(name)
			if err != nil {
				return err
			}
			defer file.Close()
			if err := replay.Write(out, r, f); err != nil && err != io.EOF {
				return readError(name, err)
			}
			warnIncomplete(name, r)
			return nil
		},
	})
}
