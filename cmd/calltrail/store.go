package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/store"
)

// storeFlags choose, with --from, the calls of a store a verb reads
// instead of a trace file.
type storeFlags struct {
	from         string
	service      string
	labels       labelList
	since, until string
}

type labelList []string

func (l *labelList) String() string { return strings.Join(*l, ",") }
func (l *labelList) Set(s string) error {
	if _, _, err := store.ParseLabel(s); err != nil {
		return err
	}
	*l = append(*l, s)
	return nil
}

func (sf *storeFlags) register(fs *flag.FlagSet) {
	*sf = storeFlags{}
	fs.StringVar(&sf.from, "from", "", "read the calls of a store, `clickhouse://HOST:PORT/DB[?cluster=NAME]`, instead of a trace file")
	fs.StringVar(&sf.service, "service", "", "with --from: only traces pushed with service `NAME`")
	fs.Var(&sf.labels, "label", "with --from: only traces pushed with label `KEY=VALUE` (repeat for more)")
	fs.StringVar(&sf.since, "since", "", "with --from: only calls that began at or after `TIME` (RFC 3339, or a duration ago: 24h)")
	fs.StringVar(&sf.until, "until", "", "with --from: only calls that began before `TIME` (RFC 3339, or a duration ago)")
}

// open connects to the store of --from and returns the selection the
// flags make; ff's filters read trace files and do not go with it.
func (sf *storeFlags) open(ctx context.Context, ff *filterFlags, args []string) (*store.Store, store.Selection, error) {
	var sel store.Selection
	var traceID string
	if ff != nil && ff.given() {
		for _, s := range filter.Settings {
			if s.Name != "trace-id" && ff.get(s.Name) != "" {
				return nil, sel, usageError{"-g, -F, -N, -D, -t, --window and --span filter a trace file; with --from choose calls with --service, --label, --since, --until and --trace-id"}
			}
		}
		f, err := filter.Parse(ff.get)
		if err != nil {
			return nil, sel, usageError{"-" + err.Error()}
		}
		traceID = f.TraceID
	}
	if len(args) > 0 {
		return nil, sel, usageError{fmt.Sprintf("--from reads a store: no trace file (%s) goes with it", args[0])}
	}
	cfg, err := store.ParseURL(sf.from)
	if err != nil {
		return nil, sel, usageError{"--from " + err.Error()}
	}
	sel = store.Selection{Service: sf.service, Labels: sf.labels, TraceID: traceID}
	if sel.Since, err = store.ParseTime(sf.since, time.Now()); err != nil {
		return nil, sel, usageError{"--since: " + err.Error()}
	}
	if sel.Until, err = store.ParseTime(sf.until, time.Now()); err != nil {
		return nil, sel, usageError{"--until: " + err.Error()}
	}
	s, err := store.Open(ctx, cfg)
	if err != nil {
		return nil, sel, err
	}
	return s, sel, nil
}

// name names the selection sel of the store of --from, as titles, pages
// and output show it: without a password.
func (sf *storeFlags) name(sel store.Selection) string {
	name := store.Redact(sf.from)
	if sel.Service != "" {
		name += " service=" + sel.Service
	}
	for _, l := range sel.Labels {
		name += " " + l
	}
	if sel.TraceID != "" {
		name += " trace-id=" + sel.TraceID
	}
	return name
}

// source opens what a verb reads, which then has one code path whatever
// it is: the trace file args name, analysed with the filters, or, with
// --from, the calls of the store the flags select. The verb passes its
// error through finish, which closes the store and makes an interrupt
// of work on it the verb's end (see interruptible). A verb that draws
// the calls (flame, serve) refuses a selection of none.
func (sess *session) source(ff *filterFlags, sf *storeFlags, args []string, draws bool) (ctx context.Context, src query.Source, finish func(error) error, err error) {
	if sf.from == "" {
		name, f, err := ff.traceAndFilter(sess, args)
		if err != nil {
			return nil, nil, nil, err
		}
		return context.Background(), query.NewFile(name, func(o analysis.Options) (*query.Trace, error) {
			o.Filter = f
			return ff.focused(sess.load(name, o))
		}), func(err error) error { return err }, nil
	}
	ctx, done := interruptible()
	st, sel, err := sf.open(ctx, ff, args)
	if err != nil {
		return nil, nil, nil, done(err)
	}
	// A selection of no trace is most often a label or service
	// mistyped: said, not shown as a store without calls.
	if n, err := st.Traces(ctx, sel); err != nil || n == 0 {
		st.Close()
		if err == nil {
			err = fmt.Errorf("%s: no trace in the store matches the selection", sf.name(sel))
		}
		return nil, nil, nil, done(err)
	}
	selected := st.Source(sel, sf.name(sel))
	src = selected
	if draws {
		src = drawn{selected}
	}
	return ctx, src, func(err error) error {
		st.Close()
		return done(err)
	}, nil
}

// analysed is source for the verbs that ask the source's analysis: its
// Trace, read once; the store, if it is one, closed after.
func (sess *session) analysed(ff *filterFlags, sf *storeFlags, args []string, draws bool) (*query.Trace, error) {
	ctx, src, finish, err := sess.source(ff, sf, args, draws)
	if err != nil {
		return nil, err
	}
	t, err := src.Trace(ctx)
	return t, finish(err)
}

// drawn is a store's selection as a verb that draws its calls reads it:
// a selection of no call is a mistake (a label mistyped) to say, where a
// report says "no calls" and a diff's side may be empty.
type drawn struct{ *store.Source }

func (s drawn) Trace(ctx context.Context) (*query.Trace, error) {
	t, err := s.Source.Trace(ctx)
	if err == nil && t.Profile.Stats.Calls == 0 {
		return nil, fmt.Errorf("%s: no calls in the selection", s.Name())
	}
	return t, err
}

// interruptible returns a context that SIGINT (Ctrl-C) or SIGTERM ends,
// for work on a store that must stop cleanly rather than die where it
// stands: the store's client cancels its query on the server, which
// would otherwise run on, and a push deletes the rows it wrote. The verb
// passes its error through done, which, after a signal, makes it the
// signal's: calltrail ends by it, as it would have without a handler.
func interruptible() (ctx context.Context, done func(error) error) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var sig os.Signal
	stopped, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		select {
		case sig = <-sigs:
			cancel()
		case <-stopped:
		}
	}()
	return ctx, func(err error) error {
		signal.Stop(sigs)
		close(stopped)
		<-ended
		cancel()
		if s, ok := sig.(syscall.Signal); ok && err != nil {
			return signalled{s}
		}
		return err
	}
}

// openForPush connects to the store of --to, creating its tables if it
// has none yet.
func openForPush(ctx context.Context, to string) (*store.Store, error) {
	cfg, err := store.ParseURL(to)
	if err != nil {
		return nil, usageError{"--to " + err.Error()}
	}
	s, err := store.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := s.Init(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// bar draws a progress bar of done out of size.
func bar(done, size int64) string {
	const width = 30
	n := width
	if size > 0 && done < size {
		n = int(done * width / size)
	}
	return "[" + strings.Repeat("=", n) + strings.Repeat(" ", width-n) + "]"
}
