package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/export"
	"github.com/calltrail/calltrail/tracefile"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func exportVerb() *verb {
	var (
		ff     filterFlags
		sf     spanFlags
		format string
		output string
	)
	return &verb{
		name:    "export",
		args:    "--format pprof|folded|speedscope|chrome|otlp [-o OUT] [filters] [FILE]",
		summary: "write the trace for pprof, flamegraph.pl, speedscope, Chrome/Perfetto or OpenTelemetry",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			sf.register(fs, "with --format otlp")
			format, output = "", ""
			fs.StringVar(&format, "format", "", "`FORMAT`: pprof, folded, speedscope, chrome or otlp (OTLP JSON spans of the calls --spans, --slower and --failed choose)")
			fs.StringVar(&output, "o", "", "write to `OUT` instead of standard output")
		},
		run: func(sess *session, _ *flag.FlagSet, args []string) (err error) {
			name, f, err := ff.traceAndFilter(sess, args)
			if err != nil {
				return err
			}
			if output == "-" {
				output = "" // as most tools read it: standard output
			}
			if output == "" && format == "pprof" && sess.outTerminal {
				return usageError{"--format pprof is binary (gzipped protocol buffers), not for a terminal: name a file with -o, or redirect the output"}
			}
			if output != "" {
				if err := notInput(output, name); err != nil {
					return err
				}
				if err := notKept(output); err != nil {
					return err
				}
				if err := writable(output, "-o "+output); err != nil {
					return err
				}
			}
			if format != "otlp" && sf != (spanFlags{}) {
				return usageError{"--spans, --slower and --failed choose spans for --format otlp"}
			}
			// To a file, the export streams to a temporary file; to
			// standard output, it is held until it is complete, so that a
			// failure leaves nothing half written either way.
			var buf bytes.Buffer
			var w io.Writer = &buf
			if output != "" {
				file, cerr := createFile(output)
				if cerr != nil {
					return cerr
				}
				defer func() {
					if err != nil {
						file.abandon()
					} else {
						err = file.commit()
					}
				}()
				w = file
			}
			cut, what := 0, "chains"
			switch format {
			case "otlp":
				o, err := sf.options(f)
				if err != nil {
					return err
				}
				td, err := sess.spans(name, o)
				if err != nil {
					return err
				}
				data, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
				if err != nil {
					return err
				}
				if _, err := w.Write(append(data, '\n')); err != nil {
					return err
				}
			case "pprof", "folded":
				t, err := ff.focused(sess.load(name, analysis.Options{Filter: f, ByGoroutine: format == "pprof"}))
				if err != nil {
					return err
				}
				if err := none(t); err != nil {
					return err
				}
				if format == "pprof" {
					cut, err = export.Pprof(w, t.Profile)
				} else {
					cut, err = export.Folded(w, t.Profile)
				}
				if err != nil {
					return err
				}
			case "speedscope", "chrome":
				err := sess.readTrace(name, f, func(r *tracefile.Reader) (err error) {
					r.ReadAhead()
					if format == "chrome" {
						cut, err = export.Chrome(w, r, f)
					} else {
						cut, err = export.Speedscope(w, r, f)
					}
					var big *export.ErrTooBig
					if errors.As(err, &big) {
						big.InTrace = callsIn(name)
					}
					if err != nil {
						return err
					}
					return focusMatched(r, ff.get("F"), f)
				})
				if err != nil {
					return err
				}
				what = "calls"
			default:
				return usageError{fmt.Sprintf("--format %q: want pprof, folded, speedscope, chrome or otlp", format)}
			}
			if cut > 0 {
				if what == "chains" {
					fmt.Fprintf(sess.errOut, "calltrail: %d chains deeper than %d calls were cut to their innermost %d, as Go's profiler cuts its stacks\n", cut, export.MaxStack, export.MaxStack)
				} else {
					fmt.Fprintf(sess.errOut, "calltrail: %d calls nested deeper than %d were left out: a timeline draws a row for each level\n", cut, export.MaxStack)
				}
			}
			// -g naming a goroutine that ran no traced call is an
			// error, not an empty export.
			if err := sess.unseen(); err != nil {
				return err
			}
			if output == "" {
				_, err := sess.out.Write(buf.Bytes())
				return err
			}
			return nil
		},
	}
}

// callsIn returns how many calls trace name holds, as its summary says;
// 0 when it has none.
func callsIn(name string) uint64 {
	file, err := tracefile.Open(name)
	if err != nil {
		return 0
	}
	defer file.Close()
	s, _ := file.Summary()
	return s.Calls
}
