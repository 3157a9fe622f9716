package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/traceout"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/spans"
	"github.com/calltrail/calltrail/tracefile"
)

// defaultTrace returns the trace a verb reads when none is named: where
// a traced program writes its trace, CALLTRAIL_OUT (unless it names a
// directory, which the program names its trace in), else calltrail.out.
func defaultTrace() string {
	if env := os.Getenv("CALLTRAIL_OUT"); env != "" && !traceout.IsDir(env) {
		return env
	}
	return "calltrail.out"
}

// traceArg returns the one trace file named in args, or the default.
func traceArg(args []string) (string, error) {
	switch len(args) {
	case 0:
		return defaultTrace(), nil
	case 1:
		return args[0], nil
	}
	return "", usageError{fmt.Sprintf("want one trace file, got %d arguments", len(args))}
}

// told says on stderr what h, the health of trace name, warns of, and
// returns the verb's error for its damage: none for a damaged trace,
// whose readable part the verb shows before main says what was wrong
// (see session.damage), the error itself for an unreadable input.
func (sess *session) told(name string, h tracefile.Health) error {
	switch {
	case !h.Partial():
		return h.DamageError(name)
	case h.Damage != nil:
		// One line says what is wrong: a cut trace has no end record
		// either.
		if sess.damage == nil {
			sess.damage = h.DamageError(name)
		}
		return nil
	}
	for _, w := range h.Warnings() {
		fmt.Fprintf(sess.errOut, "calltrail: warning: %s: %s\n", name, w)
	}
	return nil
}

// readTrace opens a trace for a view with filter f (nil for none), hands
// its reader to use, and closes it; what use met reading is told as
// tracefile.Health says.
func (sess *session) readTrace(name string, f *filter.Filter, use func(*tracefile.Reader) error) error {
	file, err := openTrace(name, f)
	if err != nil {
		return err
	}
	defer file.Close()
	err = use(file.Reader)
	// A use that stopped early (its output closed) leaves a reader
	// reading ahead: stopped, it is still, for Health to read.
	file.StopReadAhead()
	var unmatched focusError
	if errors.As(err, &unmatched) {
		// Not the file's fault: said as the verbs that do not stream say it.
		if err := sess.told(name, file.Health(nil)); err != nil {
			return err
		}
		return unmatched.error
	}
	return sess.told(name, file.Health(err))
}

// openTrace opens trace name for a view with filter f (nil for none).
// When f selects requests, a first pass over the trace finds its spans
// and the span each goroutine was started under, and the reader returned
// gives only the calls of the requests selected.
func openTrace(name string, f *filter.Filter) (*tracefile.File, error) {
	file, err := tracefile.Open(name)
	if err != nil || f == nil || !f.Requests() {
		return file, err
	}
	ix, err := spans.Read(file.Reader)
	file.Close()
	if err != nil && !tracefile.IsIncomplete(err) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// Damage is told by the second pass, after what it shows.
	keep, err := ix.Select(f.TraceID, f.Span)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if file, err = tracefile.Open(name); err != nil {
		return nil, err
	}
	file.InheritSpans(ix.Inherit)
	file.KeepSpans(keep)
	return file, nil
}

// topFlags are the flags of the verbs that list the largest of
// something: how many, and whether as JSON.
type topFlags struct {
	top  int
	json bool
}

// register adds --top, with its default and what it counts, and --json.
func (lf *topFlags) register(fs *flag.FlagSet, top int, usage string) {
	*lf = topFlags{top: top}
	fs.Var(nonNegative{&lf.top}, "top", usage)
	fs.BoolVar(&lf.json, "json", false, "print JSON")
}

// nonNegative is an int flag of 0 or more.
type nonNegative struct{ n *int }

func (c nonNegative) String() string {
	if c.n == nil {
		return "0"
	}
	return strconv.Itoa(*c.n)
}

func (c nonNegative) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return errors.New("want a whole number, 0 or more")
	}
	*c.n = n
	return nil
}

// filterFlags are the filters every command that reads calls accepts:
// filter.Settings, as flags.
type filterFlags struct {
	values map[string]*string
}

func (ff *filterFlags) register(fs *flag.FlagSet) {
	ff.values = map[string]*string{}
	for _, s := range filter.Settings {
		ff.values[s.Name] = fs.String(s.Name, "", s.Usage)
	}
}

// get returns the text of filter setting name, "" when not given.
func (ff *filterFlags) get(name string) string {
	if v := ff.values[name]; v != nil {
		return *v
	}
	return ""
}

// given reports whether any filter was given.
func (ff *filterFlags) given() bool {
	for _, s := range filter.Settings {
		if ff.get(s.Name) != "" {
			return true
		}
	}
	return false
}

// traceAndFilter returns the trace file named in args and the filter the
// flags describe: how every command that reads calls starts.
func (ff *filterFlags) traceAndFilter(sess *session, args []string) (string, *filter.Filter, error) {
	name, err := traceArg(args)
	if err != nil {
		return "", nil, err
	}
	f, err := ff.filter(sess)
	return name, f, err
}

// filter parses the flags as the web UI parses its URLs' parameters; a
// filter of one goroutine is kept in sess, to tell at the end if the
// goroutine ran at all.
func (ff *filterFlags) filter(sess *session) (*filter.Filter, error) {
	f, err := filter.Parse(ff.get)
	if err != nil {
		return nil, usageError{"-" + err.Error()}
	}
	if f.G != 0 {
		sess.goroutines = f
	}
	return f, nil
}

// focusMatched says why -F showed nothing, when it matches none of the
// functions r read: as the query layer explains a name outside the trace.
func focusMatched(r *tracefile.Reader, focus string, f *filter.Filter) error {
	if f.Focus == nil {
		return nil
	}
	names := make([]string, r.NumFuncs())
	for i := range names {
		names[i] = r.Func(uint32(i + 1)).Name
		if (names[i] == focus || f.Focus.MatchString(names[i])) && query.Traced(r.Coverage(), names[i]) {
			return nil
		}
	}
	return focusError{fmt.Errorf("-F: %w", query.NotFound(r.Coverage(), names, focus))}
}

// focusError is focusMatched's error, which readTrace does not take for
// damage of the trace.
type focusError struct{ error }
