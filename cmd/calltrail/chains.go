package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/calltrail/calltrail/internal/text"
	"github.com/calltrail/calltrail/query"
)

// named is the function chains asked for fn found, by its full name,
// when fn names one (a short name, a pattern matching one); else fn.
func named(fn string, ends []string) string {
	if len(ends) == 1 {
		return ends[0]
	}
	return fn
}

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
		args:    "[--json] [--slowest N] [--panics | --errors] [filters] FUNC [FILE | --from STORE [--service NAME] [--label K=V] [--since T] [--until T]]",
		summary: "every chain of calls that reached FUNC, with counts, times, errors and the slowest calls",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			sf.register(fs)
			asJSON, slowest, panics, failed = false, 3, false, false
			fs.BoolVar(&asJSON, "json", false, "print JSON")
			fs.Var(nonNegative{&slowest}, "slowest", "show the `N` slowest calls of each chain")
			fs.BoolVar(&panics, "panics", false, "only calls left by a panic")
			fs.BoolVar(&failed, "errors", false, "only calls that returned an error, with every message")
		},
		run: func(sess *session, _ *flag.FlagSet, args []string) (err error) {
			if len(args) == 0 {
				return usageError{"name the function, e.g. calltrail chains main.D"}
			}
			if panics && failed {
				// A chain's time is that of its calls chosen not inside
				// another chosen: one way of choosing at a time.
				return usageError{"--panics and --errors choose calls two ways: give one"}
			}
			fn, rest := args[0], args[1:]
			if sf.from == "" && isTrace(fn) {
				// calltrail chains trace.out: the file was read as
				// the function, and calltrail.out as the trace; or
				// calltrail chains trace.out main.D, the other way
				// round.
				example := "main.D"
				if len(rest) == 1 && !isTrace(rest[0]) {
					example = rest[0]
				}
				return usageError{fmt.Sprintf("name the function before the trace, e.g. calltrail chains %s %s", example, fn)}
			}
			ctx, src, finish, err := sess.source(&ff, &sf, rest, false)
			if err != nil {
				return err
			}
			defer func() { err = finish(err) }()
			chains, err := src.Chains(ctx, fn, query.ChainOptions{Slowest: slowest, OnlyErrors: failed, OnlyPanics: panics})
			if err != nil {
				return err
			}
			ends := query.Ends(chains)
			if len(ends) > 1 {
				// A pattern: say what it matched, which the chains
				// mix.
				n, more := len(ends), ""
				if n > 5 {
					ends, more = ends[:5], fmt.Sprintf(" and %d more", n-5)
				}
				fmt.Fprintf(sess.errOut, "calltrail: %s matches %d functions: %s%s (a full name names one, as does a pattern ending in $)\n", fn, n, strings.Join(ends, ", "), more)
			}
			if asJSON {
				return writeJSON(sess.out, struct {
					Function string        `json:"function"`
					Chains   []query.Chain `json:"chains"`
				}{named(fn, ends), chains})
			}
			messages := 3
			if failed {
				messages = -1
			}
			text.Chains(sess.out, chains, messages)
			return nil
		},
	}
}
