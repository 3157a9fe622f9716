package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/calltrail/calltrail/internal/words"
	"github.com/calltrail/calltrail/tracefile"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/diagnose"
	"github.com/calltrail/calltrail/internal/indented"
	"github.com/calltrail/calltrail/query"
)

// load opens a trace and analyses it, telling what was wrong with it as
// tracefile.Health says.
func load(name string, o analysis.Options) (*query.Trace, error) {
	f, err := tracefile.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p := analysis.Analyze(f.Reader, o)
	if err := told(name, p.Health()); err != nil {
		return nil, err
	}
	return query.New(name, p), nil
}

// load loads the trace named in args, with the flags' filter; a focus
// that matches none of its functions is an error that says why.
func (ff *filterFlags) load(args []string, o analysis.Options) (*query.Trace, error) {
	t, err := ff.loadBase(args, o)
	if err != nil {
		return nil, err
	}
	if focus := ff.get("F"); focus != "" {
		// A focus that matches no function would show nothing: say why.
		if _, err := t.Lookup(focus); err != nil {
			return nil, fmt.Errorf("-F: %w", err)
		}
	}
	return t, nil
}

// loadBase is load for a base trace, compared with another: the focus
// may be a function only the other has.
func (ff *filterFlags) loadBase(args []string, o analysis.Options) (*query.Trace, error) {
	name, f, err := ff.traceAndFilter(args)
	if err != nil {
		return nil, err
	}
	o.Filter = f
	return load(name, o)
}

// writeJSON prints v as indented JSON: every --json output.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func reportVerb() *verb {
	var (
		ff     filterFlags
		sf     storeFlags
		lf     topFlags
		sortBy string
	)
	return &verb{
		name:    "report",
		args:    "[--sort self|total|calls|max|mean|errors] [--top N] [--json] [filters] [FILE | --from STORE [--service NAME] [--label K=V] [--since T] [--until T]]",
		summary: "per function: calls, total and self time, mean, p50, p99, max, panics",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			sf.register(fs)
			sortBy = "self"
			fs.StringVar(&sortBy, "sort", "self", "order functions by `KEY`: "+strings.Join(query.SortKeys, ", "))
			lf.register(fs, 0, "show only the first `N` functions (0: all)")
		},
		run: func(_ *flag.FlagSet, args []string) (err error) {
			if !contains(query.SortKeys, sortBy) {
				return usageError{fmt.Sprintf("--sort %q: want one of %s", sortBy, strings.Join(query.SortKeys, ", "))}
			}
			if sf.from != "" {
				ctx, done := interruptible()
				defer func() { err = done(err) }()
				st, sel, err := sf.open(ctx, &ff, args)
				if err != nil {
					return err
				}
				defer st.Close()
				funcs, err := st.Functions(ctx, sel, sortBy, lf.top)
				if err != nil {
					return err
				}
				if lf.json {
					return writeJSON(out, struct {
						Findings  []diagnose.Finding `json:"findings"`
						Functions []query.Function   `json:"functions"`
					}{[]diagnose.Finding{}, funcs})
				}
				if len(funcs) == 0 {
					fmt.Fprintln(out, "no calls")
					return nil
				}
				writeReport(out, funcs, false)
				return nil
			}
			t, err := ff.load(args, analysis.Options{})
			if err != nil {
				return err
			}
			funcs := t.Functions(sortBy, lf.top)
			if lf.json {
				findings := t.Findings
				if findings == nil {
					findings = []diagnose.Finding{}
				}
				return writeJSON(out, struct {
					Findings  []diagnose.Finding `json:"findings"`
					Functions []query.Function   `json:"functions"`
				}{findings, funcs})
			}
			writeFindings(out, t.Findings)
			writeReport(out, funcs, t.Profile.HasCPU)
			return nil
		},
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writeFindings prints findings as numbered paragraphs, and a blank line.
func writeFindings(w io.Writer, fs []diagnose.Finding) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintln(w, "Findings:")
	for i, f := range fs {
		fmt.Fprintf(w, "%d. %s\n", i+1, f.Message)
	}
	fmt.Fprintln(w)
}

// errorText writes an error as replay does: *fs.PathError "open x: …".

func dur(ns int64) string { return indented.Round(time.Duration(ns)).String() }

func writeReport(w io.Writer, funcs []query.Function, split bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "self\ttotal\tcalls\tmean\tp50\tp99\tmax\tpanics\terrors\t"
	if split {
		head += "cpu\ttracing\twait\t"
	}
	fmt.Fprintf(tw, "%s\tfunction\n", head)
	for _, f := range funcs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t", dur(f.SelfNs), dur(f.TotalNs), f.Calls,
			dur(f.MeanNs), dur(f.P50Ns), dur(f.P99Ns), dur(f.MaxNs), f.Panics, f.Errors)
		name := f.Name
		if split {
			var cpu, tracing, wait int64
			if f.CPUNs != nil {
				cpu, tracing, wait = *f.CPUNs, *f.TracingNs, *f.WaitNs
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t", dur(cpu), dur(tracing), dur(wait))
			if f.Mostly != "" {
				name += " (" + f.Mostly + ")"
			}
		}
		fmt.Fprintf(tw, "\t%s\n", name)
	}
	tw.Flush()
}

// writeChains prints chains, each with up to messages of its errors'
// messages (all, if negative).
func writeChains(w io.Writer, chains []query.Chain, messages int) {
	if len(chains) == 0 {
		fmt.Fprintln(w, "no calls")
		return
	}
	for i, c := range chains {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n", query.Text(c.Path, " -> "))
		for _, s := range c.SpawnedFrom {
			fmt.Fprintf(w, "  in goroutines started from %s\n", query.Text(s, " -> "))
		}
		fmt.Fprintf(w, "  %s, total %s, mean %s, max %s", words.Count(c.Calls, "call"), dur(c.TotalNs), dur(c.MeanNs), dur(c.MaxNs))
		if c.Panics > 0 {
			fmt.Fprintf(w, ", %d panicked", c.Panics)
		}
		if c.Errors > 0 {
			fmt.Fprintf(w, ", %d failed", c.Errors)
		}
		fmt.Fprintln(w)
		for i, m := range c.Messages {
			if i == messages {
				fmt.Fprintf(w, "    and %d more errors (chains --errors lists them)\n", len(c.Messages)-i)
				break
			}
			fmt.Fprintf(w, "    %d× %s\n", m.Calls, m.Error)
		}
		for _, in := range c.Slowest {
			note := ""
			if in.Exit != "" {
				note = " (" + in.Exit + ")"
			}
			if in.Error != nil {
				note += " err=" + in.Error.String()
			}
			fmt.Fprintf(w, "    g[%02d] at %s: %s%s\n", in.G, dur(in.StartNs), dur(in.DurationNs), note)
		}
	}
}
