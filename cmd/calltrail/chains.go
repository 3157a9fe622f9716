package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/internal/text"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/store"
)

func chainsVerb() *verb {
	var (
		ff      filterFlags
		sf      storeFlags
		asJSON  bool
		slowest int
		panics  bool
		failed  bool
	)
	return &verb{
		name:    "chains",
		args:    "[--json] [--slowest N] [--panics] [--errors] [filters] FUNC [FILE | --from STORE [--service NAME] [--label K=V] [--since T] [--until T]]",
		summary: "every chain of calls that reached FUNC, with counts, times, errors and the slowest calls",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			sf.register(fs)
			asJSON, slowest, panics, failed = false, 3, false, false
			fs.BoolVar(&asJSON, "json", false, "print JSON")
			fs.IntVar(&slowest, "slowest", 3, "show the `N` slowest calls of each chain")
			fs.BoolVar(&panics, "panics", false, "only calls left by a panic")
			fs.BoolVar(&failed, "errors", false, "only calls that returned an error, with every message")
		},
		run: func(_ *flag.FlagSet, args []string) (err error) {
			if len(args) == 0 {
				return usageError{"name the function, e.g. calltrail chains main.D"}
			}
			fn, rest := args[0], args[1:]
			var chains []query.Chain
			if sf.from != "" {
				ctx, done := interruptible()
				defer func() { err = done(err) }()
				st, sel, err := sf.open(ctx, &ff, rest)
				if err != nil {
					return err
				}
				defer st.Close()
				ids, err := st.Lookup(ctx, fn)
				if err != nil {
					return err
				}
				if chains, err = st.Chains(ctx, sel, ids, store.ChainOptions{Slowest: max(slowest, 0), OnlyErrors: failed, OnlyPanics: panics}); err != nil {
					return err
				}
			} else {
				t, err := ff.load(rest, analysis.Options{Slowest: max(slowest, 0), OnlyPanics: panics, OnlyErrors: failed})
				if err != nil {
					return err
				}
				ids, err := t.Lookup(fn)
				var nf *query.NotFoundError
				if errors.As(err, &nf) && nf.Why == "" && len(nf.Near) == 0 {
					return fmt.Errorf("no function %q: the trace has no functions", fn)
				}
				if err != nil {
					return err
				}
				chains, _ = t.Chains(ids, 0)
			}
			if asJSON {
				return writeJSON(out, struct {
					Function string        `json:"function"`
					Chains   []query.Chain `json:"chains"`
				}{fn, chains})
			}
			messages := 3
			if failed {
				messages = -1
			}
			text.Chains(out, chains, messages)
			return nil
		},
	}
}
