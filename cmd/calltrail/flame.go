package main

import (
	"bytes"
	"flag"
	"fmt"
	"strings"

	"github.com/calltrail/calltrail/flame"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/web"
)

func flameVerb() *verb {
	var (
		ff                  filterFlags
		sf                  storeFlags
		output, base        string
		self, total, icicle bool
		cpu, wait           bool
	)
	return &verb{
		name:    "flame",
		args:    "[-o OUT.html|OUT.svg] [--self|--total] [--cpu|--wait] [--diff BASE] [--icicle] [filters] [FILE | --from STORE [--service NAME] [--label K=V] [--since T] [--until T]]",
		summary: "draw a flame graph of exact call times, as an interactive page or an SVG",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			sf.register(fs)
			output, base, self, total, icicle, cpu, wait = "", "", false, false, false, false, false
			fs.StringVar(&output, "o", "", "write to `OUT`: .svg for a static SVG, anything else an HTML page (default: HTML on standard output)")
			fs.BoolVar(&self, "self", false, "an inverted graph of self time: functions the time was spent in, and their callers")
			fs.BoolVar(&total, "total", false, "boxes as wide as the time of their calls (the default)")
			fs.BoolVar(&cpu, "cpu", false, "boxes as wide as the time on CPU (from the CPU profile recorded with the trace)")
			fs.BoolVar(&wait, "wait", false, "boxes as wide as the time off CPU: waiting on locks, channels, system calls, the scheduler")
			fs.StringVar(&base, "diff", "", "colour by change from the `BASE` trace: red slower, blue faster")
			fs.BoolVar(&icicle, "icicle", false, "draw the root at the top (the page can switch)")
		},
		run: func(sess *session, _ *flag.FlagSet, args []string) (err error) {
			if self && total {
				return usageError{"--self and --total do not go together"}
			}
			if cpu && wait {
				return usageError{"--cpu and --wait do not go together"}
			}
			if sf.from != "" && (cpu || wait || base != "") {
				return usageError{"with --from, flame draws wall time: --cpu, --wait and --diff read trace files"}
			}
			if output == "-" {
				output = "" // as most tools read it: standard output
			}
			if output != "" {
				inputs := []string{base}
				if sf.from == "" {
					name, err := traceArg(args)
					if err != nil {
						return err
					}
					inputs = append(inputs, name)
				}
				if err := notInput(output, inputs...); err != nil {
					return err
				}
				if err := notKept(output); err != nil {
					return err
				}
				if err := writable(output, "-o "+output); err != nil {
					return err
				}
			}
			t, err := sess.analysed(&ff, &sf, args, true)
			if err != nil {
				return err
			}
			if err := none(t); err != nil {
				return err
			}
			weight, kind := query.Wall, "wall time"
			if cpu || wait {
				weight, kind = query.OnCPU, "time on CPU"
				if wait {
					weight, kind = query.OffCPU, "time off CPU"
				}
				if err := t.Weighs(weight); err != nil {
					return err
				}
			}
			if self {
				kind = "self " + kind + ", inverted"
			}
			title := fmt.Sprintf("%s: %s", t.Name, kind)
			var bt *query.Trace
			if base != "" {
				if bt, err = ff.loadBase(sess, base); err != nil {
					return err
				}
				sess.sameProgram(bt, t)
				title = fmt.Sprintf("%s against %s: %s", t.Name, base, kind)
			}
			var buf bytes.Buffer
			if strings.HasSuffix(output, ".svg") {
				err = flame.WriteSVG(&buf, t.Flame(bt, self, weight), flame.Options{Title: title, Icicle: icicle})
			} else {
				err = web.WriteFlamePage(&buf, t, bt, web.FlamePage{Title: title, Inverted: self, Weight: weight, Icicle: icicle})
			}
			if err != nil {
				return err
			}
			// -g naming a goroutine that ran no traced call is an
			// error, not an empty graph.
			if err := sess.unseen(); err != nil {
				return err
			}
			if output == "" {
				_, err = sess.out.Write(buf.Bytes())
				return err
			}
			return writeFile(output, buf.Bytes())
		},
	}
}
