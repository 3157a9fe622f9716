package main

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/text"
	"github.com/calltrail/calltrail/spans"
	"github.com/calltrail/calltrail/tracefile"
)

func spansVerb() *verb {
	var (
		lf            topFlags
		traceID, name string
		funcs         int
	)
	return &verb{
		name:    "spans",
		args:    "[--top N] [--json] [--trace-id ID] [--span REGEX] [FILE]",
		summary: "the program's OpenTelemetry spans (its requests), slowest first, with their calls and where their time went",
		flags: func(fs *flag.FlagSet) {
			lf.register(fs, 20, "show the `N` slowest spans (0: all)")
			for _, s := range filter.Settings {
				switch s.Name {
				case "trace-id":
					fs.StringVar(&traceID, s.Name, "", "show only the spans of trace `ID`")
				case "span":
					fs.StringVar(&name, s.Name, "", "show only spans named by `REGEX`, and the spans under them")
				}
			}
			fs.IntVar(&funcs, "funcs", 3, "name the `N` functions each span's calls spent the most time in")
		},
		run: func(sess *session, _ *flag.FlagSet, args []string) error {
			path, err := traceArg(args)
			if err != nil {
				return err
			}
			f, err := filter.Parse(func(n string) string {
				switch n {
				case "trace-id":
					return traceID
				case "span":
					return name
				}
				return ""
			})
			if err != nil {
				return usageError{"-" + err.Error()}
			}
			var ix *spans.Index
			err = sess.readTrace(path, nil, func(r *tracefile.Reader) (err error) {
				ix, err = spans.Read(r)
				return err
			})
			if err != nil {
				return err
			}
			// Of a damaged trace, the spans before the damage; main says
			// what was wrong after them.
			var meta tracefile.Meta
			err = sess.readTrace(path, nil, func(r *tracefile.Reader) error {
				meta = r.Meta()
				return ix.Count(r, func(id uint32) string { return r.Func(id).Name })
			})
			if err != nil {
				return err
			}
			list := choose(ix, f.TraceID, f.Span)
			if len(ix.Spans) > 0 && len(list) == 0 {
				_, err := ix.Select(f.TraceID, f.Span)
				return err
			}
			if lf.top > 0 && len(list) > lf.top {
				list = list[:lf.top]
			}
			if lf.json {
				out := make([]spans.JSON, 0, len(list))
				for _, s := range list {
					out = append(out, ix.JSON(s, funcs))
				}
				return writeJSON(sess.out, out)
			}
			if len(ix.Spans) == 0 && meta.Snapshot() {
				// A window holds the spans started in it: a quiet
				// service's has none, whatever its build.
				fmt.Fprintf(sess.out, "%s: no OpenTelemetry spans: none started in the snapshot's %s, or the program starts none, or was not built by calltrail build, run or test with the OpenTelemetry SDK\n", path, text.Duration(int64(meta.Window.End-meta.Window.Start)))
				return nil
			}
			if len(ix.Spans) == 0 {
				fmt.Fprintf(sess.out, "%s: no OpenTelemetry spans: the program started none, or was not built by calltrail build, run or test with the OpenTelemetry SDK\n", path)
				return nil
			}
			writeSpans(sess.out, list, funcs)
			return nil
		},
	}
}

// choose returns the spans of ix the selection names, slowest first.
func choose(ix *spans.Index, traceID string, name *regexp.Regexp) []*spans.Span {
	keep, _ := ix.Keep(traceID, name)
	var out []*spans.Span
	for _, s := range ix.Slowest() {
		if keep(s.ID) {
			out = append(out, s)
		}
	}
	return out
}

// spanKinds are OpenTelemetry's names of span kinds.
var spanKinds = [...]string{"", "internal", "server", "client", "producer", "consumer"}

func kindName(k int) string {
	if k > 0 && k < len(spanKinds) {
		return spanKinds[k]
	}
	return ""
}

func writeSpans(w io.Writer, list []*spans.Span, funcs int) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "DURATION\tCALLS\tGOROUTINES\tTRACE ID\tSPAN\tKIND\tTIME IN (own time)")
	for _, s := range list {
		d := text.Duration(s.Duration())
		if !s.Ended {
			d += " (not ended)"
		}
		var top []string
		for _, f := range s.Funcs[:min(funcs, len(s.Funcs))] {
			top = append(top, fmt.Sprintf("%s %s", f.Name, text.Duration(f.Self)))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\n", d, s.Calls, s.Goroutines, s.Trace, tracefile.Printable(s.Name), kindName(s.Kind), strings.Join(top, ", "))
	}
	tw.Flush()
}
