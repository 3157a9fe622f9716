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
		cpu, wait           bool
	)
	register(&verb{
		name:    "flame",
		args:    "[-o OUT.html|OUT.svg] [--self|--total] [--cpu|--wait] [--diff BASE] [--icicle] [filters] [FILE]",
		summary: "draw a flame graph of exact call times, as an interactive page or an SVG",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			output, base, self, total, icicle, cpu, wait = "", "", false, false, false, false, false
			fs.StringVar(&output, "o", "", "write to `OUT`: .svg for a static SVG, anything else an HTML page (default: HTML on standard output)")
			fs.BoolVar(&self, "self", false, "an inverted graph of self time: functions the time was spent in, and their callers")
			fs.BoolVar(&total, "total", false, "boxes as wide as the time of their calls (the default)")
			fs.BoolVar(&cpu, "cpu", false, "boxes as wide as the time on CPU (from the CPU profile recorded with the trace)")
			fs.BoolVar(&wait, "wait", false, "boxes as wide as the time off CPU: waiting on locks, channels, system calls, the scheduler")
			fs.StringVar(&base, "diff", "", "colour by change from the `BASE` trace: red slower, blue faster")
			fs.BoolVar(&icicle, "icicle", false, "draw the root at the top (the page can switch)")
		},
		run: func(_ *flag.FlagSet, args []string) error {
			if self && total {
				return usageError{"--self and --total do not go together"}
			}
			name, p, err := ff.analyze(args, analysis.Options{})
			if err != nil {
				return err
			}
			weight, kind := flame.Wall, "wall time"
			switch {
			case cpu && wait:
				return usageError{"--cpu and --wait do not go together"}
			case cpu || wait:
				if !p.HasCPU {
					return fmt.Errorf("%s has no CPU profile to split time on and off CPU (record with calltrail run, or CALLTRAIL_PROFILES=cpu)", name)
				}
				weight, kind = flame.CPU, "time on CPU"
				if wait {
					weight, kind = flame.Wait, "time off CPU"
				}
			}
			root := flame.FromProfileBy(p, self, weight)
			if self {
				kind = "self " + kind + ", inverted"
			}
			o := flame.Options{Title: fmt.Sprintf("%s: %s", name, kind), Icicle: icicle, Inverse: self}
			if base != "" {
				_, bp, err := ff.analyze([]string{base}, analysis.Options{})
				if err != nil {
					return err
				}
				root.Diff(flame.FromProfileBy(bp, self, weight))
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
