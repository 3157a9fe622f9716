package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/tracefile"
)

const defaultTrace = "calltrail.out"

// traceArg returns the one trace file named in args, or the default.
func traceArg(args []string) (string, error) {
	switch len(args) {
	case 0:
		return defaultTrace, nil
	case 1:
		return args[0], nil
	}
	return "", usageError{fmt.Sprintf("want one trace file, got %d arguments", len(args))}
}

// openTrace opens a trace and reads its header, with errors that name the
// file and say what is wrong in one line.
func openTrace(name string) (*os.File, *tracefile.Reader, error) {
	f, err := os.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: no such trace file (record one with CALLTRAIL_OUT=%s, or name the file)", name, name)
		}
		return nil, nil, err
	}
	r, err := tracefile.NewReader(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, r, nil
}

// The policy for damaged traces, the same in every verb: a trace without
// an end record (its program was killed, or is still running) is read
// whole, with a warning, and the verb succeeds. A trace cut short inside
// a chunk, or damaged (a checksum that fails, contents that cannot be),
// is read up to the damage: the verb shows what came before it, then says
// what was wrong, in one line, and exits with status 1. A file that is
// not a trace at all is refused at once. serve shows a damaged trace's
// readable part, with the damage said on the page.
//
// damage is the damage met while reading, told when the verb is done.
var damage error

// noteDamage records the damage err met reading trace name.
func noteDamage(name string, err error) {
	if damage == nil {
		damage = fmt.Errorf("%s: %w (the output shows what came before)", name, err)
	}
}

// readTrace opens a trace, hands its reader to use, and closes it. An
// error from use that stopped reading a damaged trace is noted as the
// policy says; others are returned.
func readTrace(name string, use func(*tracefile.Reader) error) error {
	file, r, err := openTrace(name)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := use(r); err != nil {
		if !tracefile.IsIncomplete(err) {
			return readError(name, err)
		}
		noteDamage(name, err)
		return nil
	}
	warnIncomplete(name, r)
	return nil
}

// topFlags are the flags of the verbs that list the largest of
// something: how many, and whether as JSON.
type topFlags struct {
	top  int
	json bool
}

// register adds --top, with its default and what it counts, and --json.
func (lf *topFlags) register(fs *flag.FlagSet, top int, usage string) {
	*lf = topFlags{}
	fs.IntVar(&lf.top, "top", top, usage)
	fs.BoolVar(&lf.json, "json", false, "print JSON")
}

// goroutineFilter is the filter of a verb given -g, asked when the verb
// is done whether the goroutine was there at all.
var goroutineFilter *filter.Filter

// readError describes an error that stopped reading a trace after part
// of it had been used.
func readError(name string, err error) error {
	if errors.Is(err, tracefile.ErrTruncated) {
		return fmt.Errorf("%s: %w; output shows the calls before that point", name, err)
	}
	return fmt.Errorf("%s: %w", name, err)
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
func (ff *filterFlags) traceAndFilter(args []string) (string, *filter.Filter, error) {
	name, err := traceArg(args)
	if err != nil {
		return "", nil, err
	}
	f, err := ff.filter()
	return name, f, err
}

// filter parses the flags as the web UI parses its URLs' parameters.
func (ff *filterFlags) filter() (*filter.Filter, error) {
	f, err := filter.Parse(ff.get)
	if err != nil {
		return nil, usageError{"-" + err.Error()}
	}
	if f.G != 0 {
		goroutineFilter = f
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
		if names[i] == focus || f.Focus.MatchString(names[i]) {
			return nil
		}
	}
	return fmt.Errorf("-F: %w", query.NotFound(r.Coverage(), names, focus))
}

// warnIncomplete tells on stderr that a trace has no end chunk: the
// program was killed, or is still running.
func warnIncomplete(name string, r *tracefile.Reader) {
	if _, ok := r.End(); !ok {
		fmt.Fprintf(errOut, "calltrail: warning: %s has no end record: the program was killed or is still running; showing what was written\n", name)
	}
}
