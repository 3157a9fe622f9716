package query

import (
	"context"
	"errors"
	"fmt"

	"github.com/calltrail/calltrail/analysis"
)

// A Source is where a view's calls come from: a trace file (File), or
// the calls of a store a selection chooses (store.Source). The command
// line's verbs and the web UI open one and ask it, with one code path
// whichever it is. Every answer comes from the model, Trace, but the
// chains that reached a function: a store keeps them with what its tree
// of chains cannot carry (how many times each step of a recursion ran,
// the slowest calls), and answers them itself.
type Source interface {
	// Name names the source in titles, pages and messages; never with
	// a password.
	Name() string
	// Trace returns the source's calls analysed: functions, findings,
	// the flame graph, the overview, the goroutines, a diff's side.
	Trace(ctx context.Context) (*Trace, error)
	// Chains returns the chains of calls that reached the functions fn
	// names (a name, else a regular expression), counting o's calls, the
	// most calls first.
	Chains(ctx context.Context, fn string, o ChainOptions) ([]Chain, error)
}

// ChainOptions choose the calls Chains counts, and how many of each
// chain's slowest calls it keeps.
type ChainOptions struct {
	Slowest    int  // the slowest calls kept per chain
	OnlyErrors bool // only calls that returned an error
	OnlyPanics bool // only calls left by a panic
}

// File is the Source of a trace file, analysed by open: the command
// line's opener applies its filters and its policy for damaged traces.
type File struct {
	name  string
	open  func(analysis.Options) (*Trace, error)
	trace *Trace
}

// NewFile returns the Source of the trace file name, which open
// analyses with the options it is given.
func NewFile(name string, open func(analysis.Options) (*Trace, error)) *File {
	return &File{name: name, open: open}
}

// Name is the file's name.
func (f *File) Name() string { return f.name }

// Trace analyses the file, once.
func (f *File) Trace(context.Context) (*Trace, error) {
	if f.trace == nil {
		t, err := f.open(analysis.Options{})
		if err != nil {
			return nil, err
		}
		f.trace = t
	}
	return f.trace, nil
}

// Chains analyses the file again, keeping o's calls.
func (f *File) Chains(_ context.Context, fn string, o ChainOptions) ([]Chain, error) {
	t, err := f.open(analysis.Options{Slowest: max(o.Slowest, 0), OnlyErrors: o.OnlyErrors, OnlyPanics: o.OnlyPanics, Chains: ChainFolder})
	if err != nil {
		return nil, err
	}
	ids, err := t.Lookup(fn)
	var nf *NotFoundError
	if errors.As(err, &nf) && nf.Why == "" && len(nf.Near) == 0 {
		return nil, fmt.Errorf("no function %q: the trace has no functions", fn)
	}
	if err != nil {
		return nil, err
	}
	chains, _ := t.Chains(ids, 0)
	return chains, nil
}
