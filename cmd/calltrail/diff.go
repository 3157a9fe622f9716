package main

import (
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/query"
)

func init() {
	var (
		ff filterFlags
		lf topFlags
	)
	register(&verb{
		name:    "diff",
		args:    "[--top N] [--json] [filters] BASE NEW",
		summary: "compare two traces: per function and per chain, calls, time and errors before and after",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			lf.register(fs, 20, "show the `N` largest changes of each kind (0: all)")
		},
		run: func(_ *flag.FlagSet, args []string) error {
			if len(args) != 2 {
				return usageError{"name the two traces: BASE NEW"}
			}
			f, err := ff.filter()
			if err != nil {
				return err
			}
			base, err := load(args[0], analysis.Options{Filter: f})
			if err != nil {
				return err
			}
			cur, err := load(args[1], analysis.Options{Filter: f})
			if err != nil {
				return err
			}
			d := query.Compare(base, cur, lf.top)
			if lf.json {
				return writeJSON(out, d)
			}
			writeDiff(out, "function (self time)", d.Functions)
			fmt.Fprintln(out)
			writeDiff(out, "chain (total time)", d.Chains)
			if len(d.Errors) > 0 {
				fmt.Fprintln(out)
				writeErrorDiff(out, d.Errors)
			}
			return nil
		},
	})
}

func writeDiff(w io.Writer, what string, cs []query.Change) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "base\tnew\tchange\tbase calls\tnew calls\t\t%s\n", what)
	for _, c := range cs {
		note := ""
		switch {
		case c.Appeared:
			note = " (new)"
		case c.Vanished:
			note = " (gone)"
		}
		sign, d := "+", c.DeltaNs
		if d < 0 {
			sign, d = "-", -d
		}
		name := c.Name
		if name == "" {
			name = chainText(c.Chain, " -> ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%s\t%d\t%d\t\t%s%s\n", dur(c.BaseNs), dur(c.NewNs), sign, dur(d), c.BaseCalls, c.NewCalls, name, note)
	}
	tw.Flush()
}

// writeErrorDiff prints the functions whose share of failed calls changed.
func writeErrorDiff(w io.Writer, cs []query.Change) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "base failed\tnew failed\tchange\t\tfunction (share of calls failed)\n")
	for _, c := range cs {
		b, a := c.ErrorRate()
		fmt.Fprintf(tw, "%d/%d %.1f%%\t%d/%d %.1f%%\t%+.1f pts\t\t%s\n", c.BaseErrors, c.BaseCalls, 100*b, c.NewErrors, c.NewCalls, 100*a, 100*(a-b), c.Name)
	}
	tw.Flush()
}
