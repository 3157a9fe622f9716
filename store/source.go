package store

import (
	"context"

	"github.com/calltrail/calltrail/query"
)

// Source is the query.Source of the calls a selection of a store
// chooses: the verbs and the web UI ask it as they ask a trace file.
type Source struct {
	s    *Store
	sel  Selection
	name string
}

// Source returns the query.Source of the calls sel chooses, named name
// (see Redact).
func (s *Store) Source(sel Selection, name string) *Source {
	return &Source{s: s, sel: sel, name: name}
}

// Name is the source's name.
func (src *Source) Name() string { return src.name }

// Trace is the selected calls as the local analysis's model (see
// Profile).
func (src *Source) Trace(ctx context.Context) (*query.Trace, error) {
	p, err := src.s.Profile(ctx, src.sel)
	if err != nil {
		return nil, err
	}
	return query.New(src.name, p), nil
}

// Chains returns the chains that reached the functions fn names (see
// Lookup), as Chains counts them.
func (src *Source) Chains(ctx context.Context, fn string, o query.ChainOptions) ([]query.Chain, error) {
	ids, err := src.s.Lookup(ctx, fn)
	if err != nil {
		return nil, err
	}
	return src.s.Chains(ctx, src.sel, ids, o)
}
