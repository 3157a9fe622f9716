package main

import (
	"flag"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/internal/text"
)

func goroutinesVerb() *verb {
	var (
		ff filterFlags
		lf topFlags
	)
	return &verb{
		name:    "goroutines",
		args:    "[--top N] [--json] [filters] [FILE]",
		summary: "goroutines over time: how many, how long they lived, their work, who started them",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			lf.register(fs, 10, "show the first `N` chains that started goroutines (0: all)")
		},
		run: func(sess *session, _ *flag.FlagSet, args []string) error {
			name, f, err := ff.traceAndFilter(sess, args)
			if err != nil {
				return err
			}
			t, err := ff.focused(sess.load(name, analysis.Options{Filter: f}))
			if err != nil {
				return err
			}
			g := t.Goroutines(60, lf.top)
			if lf.json {
				return writeJSON(sess.out, g)
			}
			text.Goroutines(sess.out, t.Profile.Duration-g.From, g)
			return nil
		},
	}
}
