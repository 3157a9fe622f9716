package main

import (
	"bytes"
	"flag"
	"fmt"
	"strings"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/flame"
)

func init() {
	var (
		ff                  filterFlags
		output, base        string
		self, total, icicle bool
	)
	register(&verb{
		name:    "flame",
		args:    "[-o OUT.html|OUT.svg] [--self|--total] [--diff BASE] [--icicle] [filters] [FILE]",
		summary: "draw a flame graph of exact call times, as an interactive page or an SVG",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			output, base, self, total, icicle = "", "", false, false, false
			fs.StringVar(&output, "o", "", "write to `OUT`: .svg for a static SVG, anything else an HTML page (default: HTML on standard output)")
			fs.BoolVar(&self, "self", false, "an inverted graph of self time: functions the time was spent in, and their callers")
			fs.BoolVar(&total, "total", false, "boxes as wide as the time of their calls (the default)")
			fs.StringVar(&base, "diff", "", "colour by change from the `BASE` trace: red slower, blue faster")
			fs.BoolVar(&icicle, "icicle", false, "draw the root at the top (the page can switch)")
		},
		run: func(_ *flag.FlagSet, args []string) error {
			if self && total {
				return usageError{"--self and --total do not go together"}
			}
			name, f, err := ff.traceAndFilter(args)
			if err != nil {
				return err
			}
			p, _, err := analyze(name, analysis.Options{Filter: f})
			if err != nil {
				return err
			}
			root := flame.FromProfile(p, self)
			kind := "wall time"
			if self {
				kind = "self time, inverted"
			}
			o := flame.Options{Title: fmt.Sprintf("%s: %s", name, kind), Icicle: icicle, Inverse: self}
			if base != "" {
				bp, _, err := analyze(base, analysis.Options{Filter: f})
				if err != nil {
					return err
				}
				root.Diff(flame.FromProfile(bp, self))
				o.Diff, o.Title = true, fmt.Sprintf("%s against %s: %s", name, base, kind)
			}
			var buf bytes.Buffer
			if strings.HasSuffix(output, ".svg") {
				err = flame.WriteSVG(&buf, root, o)
			} else {
				err = flame.WriteHTML(&buf, root, o)
			}
			if err != nil {
				return err
			}
			if output == "" {
				_, err = out.Write(buf.Bytes())
				return err
			}
			return writeFile(output, buf.Bytes())
		},
	})
}
