package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/internal/text"
	"github.com/calltrail/calltrail/query"
)

func diffVerb() *verb {
	var (
		ff filterFlags
		sf storeFlags
		lf topFlags
	)
	return &verb{
		name:    "diff",
		args:    "[--top N] [--json] [filters] BASE NEW | --from STORE [--service NAME] [--label K=V] [--since T] [--until T] K=V[,K=V] K=V[,K=V]",
		summary: "compare two traces, or two sets of a store's traces: per function and per chain, calls, time and errors before and after",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			sf.register(fs)
			lf.register(fs, 20, "show the `N` largest changes of each kind (0: all)")
		},
		more: "With --from, BASE and NEW are labels the traces were pushed with, service=NAME for a service: version=1.3 version=1.4.",
		run: func(sess *session, _ *flag.FlagSet, args []string) (err error) {
			if len(args) != 2 {
				if sf.from != "" {
					return usageError{"name the two sets of traces by their labels: version=1.3 version=1.4"}
				}
				return usageError{"name the two traces: BASE NEW"}
			}
			// The two sides: traces, or sets of a store's traces. One
			// call tree at a time: a side keeps only what the diff needs.
			var srcs [2]query.Source
			ctx, finish := context.Background(), func(err error) error { return err }
			if sf.from == "" {
				f, err := ff.filter(sess)
				if err != nil {
					return err
				}
				for i, name := range args {
					srcs[i] = query.NewFile(name, func(o analysis.Options) (*query.Trace, error) {
						o.Filter = f
						return sess.load(name, o)
					})
				}
			} else {
				var done func(error) error
				ctx, done = interruptible()
				st, sel, err := sf.open(ctx, &ff, nil)
				if err != nil {
					return done(err)
				}
				finish = func(err error) error {
					st.Close()
					return done(err)
				}
				for i, labels := range args {
					s, err := sel.Narrow(labels)
					if err != nil {
						return finish(usageError{err.Error()})
					}
					srcs[i] = st.Source(s, sf.name(s))
				}
			}
			defer func() { err = finish(err) }()
			var sides [2]*query.Side
			var base *query.Trace
			for i, src := range srcs {
				t, err := src.Trace(ctx)
				if err != nil {
					return err
				}
				if i == 0 {
					base = t
				} else {
					sess.sameProgram(base, t)
				}
				sides[i] = t.Side()
				// The tree is garbage now: collect it before the next
				// is read, rather than when the heap has grown to twice
				// the size the collector last found.
				runtime.GC()
			}
			d := sides[0].Compare(sides[1], lf.top)
			if lf.json {
				return writeJSON(sess.out, d)
			}
			if d.Same() {
				// The largest changes first would be every entry at +0s.
				fmt.Fprintln(sess.out, "no change: the same functions and chains, with the same calls, times and errors")
				return nil
			}
			text.Diff(sess.out, "function (self time)", d.Functions)
			fmt.Fprintln(sess.out)
			text.Diff(sess.out, "chain (total time)", d.Chains)
			if len(d.Errors) > 0 {
				fmt.Fprintln(sess.out)
				text.ErrorDiff(sess.out, d.Errors)
			}
			return nil
		},
	}
}

// sameProgram warns when traces compared, base and t, are of different
// programs, as their main packages say: every function of one shows as
// added or removed.
func (sess *session) sameProgram(base, t *query.Trace) {
	if base.Profile == nil || t.Profile == nil {
		return
	}
	a, b := base.Profile.Meta.Package, t.Profile.Meta.Package
	if a != "" && b != "" && a != b {
		fmt.Fprintf(sess.errOut, "calltrail: warning: the traces are of different programs, %s and %s: what only one runs shows as added or removed\n", a, b)
	}
}
