package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"time"

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

// filterFlags are the filters every command that reads calls accepts.
type filterFlags struct {
	g      uint64
	focus  string
	hide   string
	depth  int
	min    time.Duration
	window string
}

func (ff *filterFlags) register(fs *flag.FlagSet) {
	*ff = filterFlags{}
	fs.Func("g", "show only goroutine `GID`", func(s string) error {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n == 0 {
			return fmt.Errorf("want a goroutine id such as 1")
		}
		ff.g = n
		return nil
	})
	fs.StringVar(&ff.focus, "F", "", "show only calls of functions matching `REGEX`, and their callees")
	fs.StringVar(&ff.hide, "N", "", "hide calls of functions matching `REGEX`, and their callees")
	fs.IntVar(&ff.depth, "D", 0, "show calls nested at most `DEPTH` deep (0: no limit)")
	fs.DurationVar(&ff.min, "t", 0, "show only calls lasting at least `DURATION` (e.g. 1ms)")
	fs.StringVar(&ff.window, "window", "", "show only calls starting in `FROM-TO`, times since the trace started (1s-2.5s, 100ms-, -2s)")
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

func (ff *filterFlags) filter() (*filter.Filter, error) {
	f := &filter.Filter{G: ff.g, MaxDepth: ff.depth, MinTime: ff.min}
	if ff.g != 0 {
		goroutineFilter = f
	}
	var err error
	if ff.focus != "" {
		if f.Focus, err = regexp.Compile(ff.focus); err != nil {
			return nil, usageError{fmt.Sprintf("-F: %v", err)}
		}
	}
	if ff.hide != "" {
		if f.Hide, err = regexp.Compile(ff.hide); err != nil {
			return nil, usageError{fmt.Sprintf("-N: %v", err)}
		}
	}
	if ff.depth < 0 {
		return nil, usageError{"-D: want a depth of 0 or more"}
	}
	if ff.window != "" {
		if f.From, f.To, err = filter.ParseWindow(ff.window); err != nil {
			return nil, usageError{fmt.Sprintf("-window: %v", err)}
		}
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
