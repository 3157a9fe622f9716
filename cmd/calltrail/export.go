package main

import (
	"bytes"
	"flag"
	"fmt"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/export"
	"github.com/calltrail/calltrail/tracefile"
)

func init() {
	var (
		ff     filterFlags
		format string
		output string
	)
	register(&verb{
		name:    "export",
		args:    "--format pprof|folded|speedscope|chrome [-o OUT] [filters] [FILE]",
		summary: "write the trace for pprof, flamegraph.pl, speedscope or Chrome/Perfetto",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			format, output = "", ""
			fs.StringVar(&format, "format", "", "`FORMAT`: pprof, folded, speedscope or chrome")
			fs.StringVar(&output, "o", "", "write to `OUT` instead of standard output")
		},
		run: func(_ *flag.FlagSet, args []string) error {
			name, f, err := ff.traceAndFilter(args)
			if err != nil {
				return err
			}
			if output != "" {
				if err := notInput(output, name); err != nil {
					return err
				}
				if err := writable(output); err != nil {
					return err
				}
			}
			var buf bytes.Buffer
			cut, what := 0, "chains"
			switch format {
			case "pprof", "folded":
				t, err := load(name, analysis.Options{Filter: f, ByGoroutine: format == "pprof"})
				if err != nil {
					return err
				}
				if format == "pprof" {
					cut, err = export.Pprof(&buf, t.Profile)
				} else {
					cut, err = export.Folded(&buf, t.Profile)
				}
				if err != nil {
					return err
				}
			case "speedscope", "chrome":
				err := readTrace(name, func(r *tracefile.Reader) (err error) {
					if format == "chrome" {
						cut, err = export.Chrome(&buf, r, f)
					} else {
						cut, err = export.Speedscope(&buf, r, f)
					}
					return err
				})
				if err != nil {
					return err
				}
				what = "calls"
			default:
				return usageError{fmt.Sprintf("--format %q: want pprof, folded, speedscope or chrome", format)}
			}
			if cut > 0 {
				if what == "chains" {
					fmt.Fprintf(errOut, "calltrail: %d chains deeper than %d calls were cut to their innermost %d, as Go's profiler cuts its stacks\n", cut, export.MaxStack, export.MaxStack)
				} else {
					fmt.Fprintf(errOut, "calltrail: %d calls nested deeper than %d were left out, as Go's profiler cuts its stacks\n", cut, export.MaxStack)
				}
			}
			if output == "" {
				_, err := out.Write(buf.Bytes())
				return err
			}
			return writeFile(output, buf.Bytes())
		},
	})
}
