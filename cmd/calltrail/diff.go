package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/calltrail/calltrail/analysis"
)

func init() {
	var (
		ff     filterFlags
		top    int
		asJSON bool
	)
	register(&verb{
		name:    "diff",
		args:    "[--top N] [--json] [filters] BASE NEW",
		summary: "compare two traces: per function and per chain, calls and time before and after",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			top, asJSON = 20, false
			fs.IntVar(&top, "top", 20, "show the `N` largest changes of each kind (0: all)")
			fs.BoolVar(&asJSON, "json", false, "print JSON")
		},
		run: func(_ *flag.FlagSet, args []string) error {
			if len(args) != 2 {
				return usageError{"name the two traces: BASE NEW"}
			}
			f, err := ff.filter()
			if err != nil {
				return err
			}
			base, _, err := analyze(args[0], analysis.Options{Filter: f})
			if err != nil {
				return err
			}
			cur, _, err := analyze(args[1], analysis.Options{Filter: f})
			if err != nil {
				return err
			}
			funcs, chains := analysis.Diff(base, cur)
			if top > 0 {
				funcs, chains = funcs[:min(top, len(funcs))], chains[:min(top, len(chains))]
			}
			if asJSON {
				return writeDiffJSON(out, funcs, chains)
			}
			writeDiff(out, "function (self time)", funcs)
			fmt.Fprintln(out)
			writeDiff(out, "chain (total time)", chains)
			return nil
		},
	})
}

func writeDiff(w io.Writer, what string, cs []analysis.Change) {
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
		sign := "+"
		if c.Delta() < 0 {
			sign = "-"
		}
		d := c.Delta()
		if d < 0 {
			d = -d
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%s\t%d\t%d\t\t%s%s\n", dur(c.BaseTime), dur(c.NewTime), sign, dur(d), c.BaseCalls, c.NewCalls, c.Name, note)
	}
	tw.Flush()
}

type changeJSON struct {
	Name      string `json:"name"`
	BaseCalls uint64 `json:"base_calls"`
	NewCalls  uint64 `json:"new_calls"`
	BaseNs    int64  `json:"base_ns"`
	NewNs     int64  `json:"new_ns"`
	DeltaNs   int64  `json:"delta_ns"`
	Appeared  bool   `json:"appeared,omitempty"`
	Vanished  bool   `json:"vanished,omitempty"`
}

func writeDiffJSON(w io.Writer, funcs, chains []analysis.Change) error {
	conv := func(cs []analysis.Change) []changeJSON {
		out := []changeJSON{}
		for _, c := range cs {
			out = append(out, changeJSON{c.Name, c.BaseCalls, c.NewCalls, c.BaseTime, c.NewTime, c.Delta(), c.Appeared, c.Vanished})
		}
		return out
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"functions": conv(funcs), "chains": conv(chains)})
}
