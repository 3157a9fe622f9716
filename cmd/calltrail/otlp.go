package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/otlp"
	"github.com/calltrail/calltrail/store"
	"github.com/calltrail/calltrail/tracefile"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// spanFlags choose the calls that become OpenTelemetry spans.
type spanFlags struct {
	funcs  string
	slower time.Duration
	failed bool
}

// defaultSlower is the threshold of spans when no flag chooses them.
const defaultSlower = time.Millisecond

func (sf *spanFlags) register(fs *flag.FlagSet, when string) {
	*sf = spanFlags{}
	fs.StringVar(&sf.funcs, "spans", "", when+": a span for every call of functions matching `REGEX`")
	fs.DurationVar(&sf.slower, "slower", 0, when+": a span for every call lasting at least `DURATION`")
	fs.BoolVar(&sf.failed, "failed", false, when+": a span for every call that returned an error or panicked (with none of --spans, --slower, --failed: --failed --slower 1ms)")
}

func (sf *spanFlags) options(f *filter.Filter) (otlp.Options, error) {
	o := otlp.Options{Slower: sf.slower, Failed: sf.failed, Filter: f}
	if sf.funcs != "" {
		re, err := regexp.Compile(sf.funcs)
		if err != nil {
			return o, usageError{"--spans: " + err.Error()}
		}
		o.Funcs = re
	}
	if o.Funcs == nil && o.Slower == 0 && !o.Failed {
		o.Failed, o.Slower = true, defaultSlower
	}
	return o, nil
}

// spans reads the trace file name and returns the spans o chooses, with
// the file's id as their ids' seed.
func (sess *session) spans(name string, o otlp.Options) (ptrace.Traces, error) {
	id, err := store.TraceID(name)
	if err != nil {
		return ptrace.Traces{}, err
	}
	o.ID = id
	var td ptrace.Traces
	err = sess.readTrace(name, o.Filter, func(r *tracefile.Reader) (err error) {
		td, err = otlp.Spans(r, o)
		return err
	})
	return td, err
}

// pushSpans sends the spans of traces to the OTLP receiver at to.
func (sess *session) pushSpans(to string, o otlp.Options, traces []string) error {
	endpoint, err := otlp.Endpoint(to)
	if err != nil {
		return usageError{"--to " + err.Error()}
	}
	client := &http.Client{Timeout: time.Minute}
	for _, name := range traces {
		td, err := sess.spans(name, o)
		if err != nil {
			return err
		}
		if err := otlp.Post(context.Background(), client, endpoint, td); err != nil {
			return err
		}
		fmt.Fprintf(sess.errOut, "calltrail: %s: sent %d spans to %s\n", name, td.SpanCount(), endpoint)
	}
	return nil
}
