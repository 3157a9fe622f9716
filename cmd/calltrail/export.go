package main

import (
	"bytes"
	"flag"
	"fmt"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/export"
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
			var buf bytes.Buffer
			switch format {
			case "pprof", "folded":
				p, _, err := analyze(name, analysis.Options{Filter: f, ByGoroutine: format == "pprof"})
				if err != nil {
					return err
				}
				if format == "pprof" {
					err = export.Pprof(&buf, p)
				} else {
					err = export.Folded(&buf, p)
				}
				if err != nil {
					return err
				}
			case "speedscope", "chrome":
				file, r, err := openTrace(name)
				if err != nil {
					return err
				}
				defer file.Close()
				if format == "chrome" {
					err = export.Chrome(&buf, r, f)
				} else {
					err = export.Speedscope(&buf, r, f)
				}
				if err != nil {
					return readError(name, err)
				}
			default:
				return usageError{fmt.Sprintf("--format %q: want pprof, folded, speedscope or chrome", format)}
			}
			if output == "" {
				_, err := out.Write(buf.Bytes())
				return err
			}
			return writeFile(output, buf.Bytes())
		},
	})
}
