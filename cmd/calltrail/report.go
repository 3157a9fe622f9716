package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/diagnose"
	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/indented"
	"github.com/calltrail/calltrail/internal/text"
	"github.com/calltrail/calltrail/query"
)

// load opens a trace and analyses it, telling what was wrong with it as
// tracefile.Health says.
func (sess *session) load(name string, o analysis.Options) (*query.Trace, error) {
	f, err := openTrace(name, o.Filter)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	f.ReadAhead() // decoding on one core, the analysis on another
	o.Chains = query.ChainFolder
	p := analysis.Analyze(f.Reader, o)
	if err := sess.told(name, p.Health()); err != nil {
		return nil, err
	}
	if err := pastEnd(name, o.Filter, p.Duration); err != nil {
		return nil, err
	}
	if err := sess.unseen(); err != nil {
		return nil, err // an error, not an empty view
	}
	return query.New(name, p), nil
}

// pastEnd is the error of a -window that starts at the end of trace
// name, end, or after it: it selects nothing, said rather than shown as
// an empty view. The error names the trace unless name is "".
func pastEnd(name string, f *filter.Filter, end time.Duration) error {
	if f == nil || f.From <= 0 || f.From < end {
		return nil
	}
	err := fmt.Errorf("-window starts at %s, past the end of the trace at %s", f.From, indented.Round(end))
	if name != "" {
		err = fmt.Errorf("%s: %w", name, err)
	}
	return err
}

// none is the error of a graph or an export of no call: the filters, a
// window past the end or -N . leaving every call out, said rather than
// written as an empty file.
func none(t *query.Trace) error {
	if len(t.Profile.Funcs) > 0 {
		return nil
	}
	if t.Profile.Stats.Calls > 0 {
		return fmt.Errorf("%s: the filters leave out every one of its %d calls (calltrail info says when they ran)", t.Name, t.Profile.Stats.Calls)
	}
	return fmt.Errorf("%s: no calls", t.Name)
}

// leftOut warns that the profiles of t were left out of the calls the
// filters select, and why: the views that show time on and off CPU or
// waits say so, as their columns are missing.
func (sess *session) leftOut(t *query.Trace) {
	for _, why := range t.Profile.LeftOut {
		fmt.Fprintf(sess.errOut, "calltrail: warning: %s: %s\n", t.Name, why)
	}
}

// focused returns t, loaded with err, unless the flags' focus matches
// none of its functions: that would show nothing, so it is an error that
// says why.
func (ff *filterFlags) focused(t *query.Trace, err error) (*query.Trace, error) {
	if err != nil {
		return nil, err
	}
	if focus := ff.get("F"); focus != "" {
		if _, err := t.Lookup(focus); err != nil {
			return nil, fmt.Errorf("-F: %w", err)
		}
	}
	return t, nil
}

// loadBase loads a base trace, compared with another, with the flags'
// filter: its focus may be a function only the other has.
func (ff *filterFlags) loadBase(sess *session, name string) (*query.Trace, error) {
	f, err := ff.filter(sess)
	if err != nil {
		return nil, err
	}
	return sess.load(name, analysis.Options{Filter: f})
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
		run: func(sess *session, _ *flag.FlagSet, args []string) (err error) {
			if !contains(query.SortKeys, sortBy) {
				return usageError{fmt.Sprintf("--sort %q: want one of %s", sortBy, strings.Join(query.SortKeys, ", "))}
			}
			t, err := sess.analysed(&ff, &sf, args, false)
			if err != nil {
				return err
			}
			sess.leftOut(t)
			funcs := t.Functions(sortBy, lf.top)
			if lf.json {
				findings := t.Findings
				if findings == nil {
					findings = []diagnose.Finding{}
				}
				return writeJSON(sess.out, struct {
					Findings  []diagnose.Finding `json:"findings"`
					Functions []query.Function   `json:"functions"`
				}{findings, funcs})
			}
			if len(funcs) == 0 {
				fmt.Fprintln(sess.out, "no calls")
				return nil
			}
			text.Findings(sess.out, t.Findings)
			text.Report(sess.out, funcs, t.Profile.HasCPU)
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
