package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/tracefile"
)

// Selection chooses the traces, and the calls of them, a query reads.
// The zero Selection reads everything.
type Selection struct {
	Service string   // traces pushed with this service
	Labels  []string // and every one of these k=v labels
	Traces  []string // and, if any, only these trace ids
	// Calls that began in [Since, Until); zero times do not bound.
	Since, Until time.Time
	// TraceID, if set, chooses the calls of one request: those that ran
	// for an OpenTelemetry span of that trace id (hex, lower case).
	TraceID string
}

// pushes returns the condition on the pushes table, with its arguments,
// that chooses the selected traces.
func (s *Store) pushes(sel Selection) (string, []any) {
	conds := []string{"1"}
	var args []any
	if sel.Service != "" {
		conds = append(conds, "service = ?")
		args = append(args, sel.Service)
	}
	for _, l := range sel.Labels {
		conds = append(conds, "has(labels, ?)")
		args = append(args, l)
	}
	if len(sel.Traces) > 0 {
		conds = append(conds, "has(?, trace)")
		args = append(args, sel.Traces)
	}
	return strings.Join(conds, " AND "), args
}

// where returns the condition on calls, with its arguments, that chooses
// the selected calls of committed pushes. GLOBAL IN reads the pushes on
// the server the query came to and sends them to the shards. Of a trace
// pushed twice at once (both pushes found it absent), one push is read.
func (s *Store) where(sel Selection) (string, []any) {
	pc, args := s.pushes(sel)
	cond := "push GLOBAL IN (SELECT min(push) FROM " + s.table("pushes") + " WHERE " + pc + " GROUP BY trace)"
	if !sel.Since.IsZero() {
		cond += " AND start >= ?"
		args = append(args, sel.Since.UnixNano())
	}
	if !sel.Until.IsZero() {
		cond += " AND start < ?"
		args = append(args, sel.Until.UnixNano())
	}
	if sel.TraceID != "" {
		cond += " AND trace_id = ?"
		args = append(args, sel.TraceID)
	}
	return cond, args
}

// calls returns the table the calls sel chooses are read from. Under a
// TraceID, the calls of one request as it alone makes them
// (request_calls), as the local analysis narrowed to it reads them: a
// call's chain begins at its request's outermost call, and the calls of
// others inside it are its own time. Pushes from before request_calls
// have their calls read as they are.
func (s *Store) calls(sel Selection) string {
	if sel.TraceID == "" {
		return s.table("calls")
	}
	cols := strings.Join(columnNames("calls"), ", ")
	return "(SELECT " + cols + " FROM " + s.table("request_calls") +
		" UNION ALL SELECT " + cols + " FROM " + s.table("calls") + " WHERE push GLOBAL IN (SELECT push FROM " + s.table("pushes") + " WHERE requests = 0))"
}

// outermost returns the SQL condition that says whether a selected call
// counts in its function's total (col "outer") or its chain's
// ("chain_outer"): when no outer call of the same function (chain) is
// selected too, so that the time of a recursion counts once. Calls are
// chosen by when they began, and an outer call began before the inner
// one: it is left out when it began before sel.Since.
func (sel Selection) outermost(col string) string {
	if sel.Since.IsZero() {
		return col + " = 1"
	}
	return fmt.Sprintf("(%s = 1 OR %s_start < %d)", col, col, sel.Since.UnixNano())
}

// Traces returns the number of traces the selection reads.
func (s *Store) Traces(ctx context.Context, sel Selection) (int, error) {
	cond, args := s.pushes(sel)
	var n uint64
	err := s.conn.QueryRow(ctx, "SELECT uniqExact(trace) FROM "+s.table("pushes")+" WHERE "+cond, args...).Scan(&n)
	return int(n), s.noSchema(err)
}

func (s *Store) noSchema(err error) error {
	if err != nil && strings.Contains(err.Error(), "doesn't exist") {
		return fmt.Errorf("%s: %w", s.cfg.Database, ErrNoSchema)
	}
	return err
}

// names returns functions, their names and places, by id.
func (s *Store) names(ctx context.Context, ids []uint64) (map[uint64]tracefile.Func, error) {
	out := map[uint64]tracefile.Func{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.conn.Query(ctx, "SELECT id, any(name), any(file), any(line) FROM "+s.table("functions")+" WHERE id IN ("+list(ids)+") GROUP BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id uint64
		var f tracefile.Func
		var line uint32
		if err := rows.Scan(&id, &f.Name, &f.File, &line); err != nil {
			return nil, err
		}
		// Anyone may push to a store: a name is shown as a trace's is.
		f.Name, f.File, f.Line = tracefile.Printable(f.Name), tracefile.Printable(f.File), int(line)
		out[id] = f
	}
	return out, rows.Err()
}

// Lookup returns the ids of the functions name names: the function of
// that exact name, or else those whose name the regular expression name
// matches anywhere (RE2, as ClickHouse's match).
func (s *Store) Lookup(ctx context.Context, name string) ([]uint64, error) {
	exact := query.Unanchored(name)
	if n, err := s.names(ctx, []uint64{FuncID(exact)}); err != nil {
		return nil, s.noSchema(err)
	} else if n[FuncID(exact)].Name == exact {
		return []uint64{FuncID(exact)}, nil
	}
	rows, err := s.conn.Query(ctx, "SELECT DISTINCT id FROM "+s.table("functions")+" WHERE match(name, ?)", name)
	if err != nil {
		return nil, s.noSchema(err)
	}
	defer rows.Close()
	var ids []uint64
	for rows.Next() {
		var id uint64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no function %q in the store, nor one whose name it matches", name)
	}
	return ids, nil
}

// Chains returns the chains that reached the functions ids in the
// selected calls, as query.Trace.Chains does for one trace, the most
// calls first.
func (s *Store) Chains(ctx context.Context, sel Selection, ids []uint64, o query.ChainOptions) ([]query.Chain, error) {
	cond, args := s.where(sel)
	cond += " AND func IN (" + list(ids) + ")"
	if o.OnlyErrors {
		cond += " AND " + failed
	}
	if o.OnlyPanics {
		cond += " AND exit = 1"
	}
	// A chain's total holds its outermost calls chosen: the time of
	// those inside calls of the chain left out by their ending counts
	// less that of the ones inside them that are chosen too.
	total := "sumIf(dur, " + sel.outermost("chain_outer") + ")"
	switch {
	case o.OnlyErrors && o.OnlyPanics:
		return nil, errors.New("calls that panicked and calls that failed are asked for one at a time")
	case o.OnlyErrors:
		total = "sum(dur - chain_failed_inner)"
	case o.OnlyPanics:
		total = "sum(dur - chain_panicked_inner)"
	}
	rows, err := s.conn.Query(ctx, `SELECT chain, count(), `+total+`, sum(dur), max(dur), countIf(exit = 1), countIf(`+failed+`)
		FROM `+s.calls(sel)+` WHERE `+cond+` GROUP BY chain`, args...)
	if err != nil {
		return nil, s.noSchema(err)
	}
	byID := map[uint64]*query.Chain{}
	var chainIDs []uint64
	for rows.Next() {
		var id, calls, panics, errs uint64
		var total, sum, mx int64
		if err := rows.Scan(&id, &calls, &total, &sum, &mx, &panics, &errs); err != nil {
			rows.Close()
			return nil, err
		}
		byID[id] = &query.Chain{Calls: calls, TotalNs: total, MeanNs: sum / int64(max(calls, 1)), MaxNs: mx, Panics: panics, Errors: errs, SpawnedFrom: [][]query.Step{}, Slowest: []query.Call{}}
		chainIDs = append(chainIDs, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(chainIDs) == 0 {
		return []query.Chain{}, nil
	}
	if err := s.paths(ctx, sel, chainIDs, byID); err != nil {
		return nil, err
	}
	if err := s.messages(ctx, s.calls(sel), cond, args, byID); err != nil {
		return nil, err
	}
	if err := s.spawnedFrom(ctx, sel, byID); err != nil {
		return nil, err
	}
	if o.Slowest > 0 {
		var err error
		if o.OnlyErrors || o.OnlyPanics {
			err = s.slowestOutside(ctx, s.calls(sel), cond, args, o.Slowest, byID)
		} else {
			err = s.slowest(ctx, s.calls(sel), cond+" AND "+sel.outermost("chain_outer"), args, o.Slowest, byID)
		}
		if err != nil {
			return nil, err
		}
	}
	out := make([]query.Chain, 0, len(byID))
	for _, c := range byID {
		out = append(out, *c)
	}
	query.SortChains(out)
	return out, nil
}

// paths fills in the chains' functions, with the most times each was
// open at once in any of the selected pushes.
func (s *Store) paths(ctx context.Context, sel Selection, ids []uint64, byID map[uint64]*query.Chain) error {
	paths, names, err := s.chainPaths(ctx, sel, ids)
	if err != nil {
		return err
	}
	for id, c := range byID {
		if c.Path, err = paths[id].steps(names, true); err != nil {
			return err
		}
	}
	return nil
}

// spawnedFrom fills in the chains that started the goroutines of each
// chain: the goroutines whose first call is the chain's first function,
// as query.Trace.Chains says it, up to five chains, the most goroutines
// first.
func (s *Store) spawnedFrom(ctx context.Context, sel Selection, byID map[uint64]*query.Chain) error {
	roots := map[uint64][]*query.Chain{}
	var ids []uint64
	for _, c := range byID {
		if len(c.Path) == 0 {
			continue
		}
		r := chainID(0, FuncID(query.First(c.Path)))
		if roots[r] == nil {
			ids = append(ids, r)
		}
		roots[r] = append(roots[r], c)
	}
	spawned, paths, names, err := s.spawners(ctx, sel, ids)
	if err != nil {
		return err
	}
	for r, m := range spawned {
		type count struct {
			steps []query.Step
			n     uint64
		}
		var cs []count
		for f, n := range m {
			steps, err := paths[f].steps(names, false)
			if err != nil {
				return err
			}
			cs = append(cs, count{steps, n})
		}
		sort.Slice(cs, func(i, j int) bool {
			if cs[i].n != cs[j].n {
				return cs[i].n > cs[j].n
			}
			return slices.Compare(query.Expand(cs[i].steps), query.Expand(cs[j].steps)) < 0
		})
		top := [][]query.Step{}
		for _, c := range cs[:min(len(cs), 5)] {
			top = append(top, c.steps)
		}
		for _, c := range roots[r] {
			c.SpawnedFrom = top
		}
	}
	return nil
}

// spawners returns, for the goroutines whose first call's chain is one
// of roots, how many of them each chain of their parents started (root,
// then parent's chain, to goroutines), with the paths of those chains
// and the names of their functions.
func (s *Store) spawners(ctx context.Context, sel Selection, roots []uint64) (map[uint64]map[uint64]uint64, map[uint64]path, map[uint64]tracefile.Func, error) {
	out, err := s.spawnCounts(ctx, sel, roots)
	if err != nil || len(out) == 0 {
		return out, nil, nil, err
	}
	var from []uint64
	for _, m := range out {
		for f := range m {
			from = append(from, f)
		}
	}
	paths, names, err := s.chainPaths(ctx, sel, from)
	return out, paths, names, err
}

// spawnCounts counts the goroutines of each root chain by the chain that
// started them.
func (s *Store) spawnCounts(ctx context.Context, sel Selection, roots []uint64) (map[uint64]map[uint64]uint64, error) {
	if len(roots) == 0 {
		return nil, nil
	}
	// Goroutines are not bounded by the selection's time range, as the
	// local analysis links them whatever its window.
	cond, args := s.where(Selection{Service: sel.Service, Labels: sel.Labels, Traces: sel.Traces, TraceID: sel.TraceID})
	root, from := "root", "spawned_from"
	if sel.TraceID != "" {
		// Of one request, the goroutines started from its own calls,
		// as the local analysis narrowed to it sees them: the calls
		// outside it are not read, and chains begin at its own.
		root, from = "request_root", "request_spawned_from"
		in, inArgs := s.where(Selection{Service: sel.Service, Labels: sel.Labels, Traces: sel.Traces, TraceID: sel.TraceID})
		cond += " AND " + from + " GLOBAL IN (SELECT chain FROM " + s.calls(sel) + " WHERE " + in + ")"
		args = append(args, inArgs...)
	}
	return s.pairCounts(ctx, "SELECT "+root+", "+from+", count() FROM "+s.table("goroutines")+" WHERE "+root+" IN ("+list(roots)+") AND "+from+" != 0 AND "+cond+" GROUP BY "+root+", "+from, args)
}

// pairCounts reads the rows of q, (a, b, count), as counts by a then b.
func (s *Store) pairCounts(ctx context.Context, q string, args []any) (map[uint64]map[uint64]uint64, error) {
	rows, err := s.conn.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[uint64]map[uint64]uint64{}
	for rows.Next() {
		var a, b, n uint64
		if err := rows.Scan(&a, &b, &n); err != nil {
			return nil, err
		}
		if out[a] == nil {
			out[a] = map[uint64]uint64{}
		}
		out[a][b] = n
	}
	return out, rows.Err()
}

// path is a chain, as query.Encode writes it, and the most times each
// step ran, as query.Folded.Counts gives them.
type path struct {
	funcs   []uint64
	repeats []uint32
}

// steps returns the chain's steps, with their counts when counts is set.
func (p path) steps(names map[uint64]tracefile.Func, counts bool) ([]query.Step, error) {
	reps := p.repeats
	if !counts {
		reps = nil
	}
	steps, err := query.Decode(p.funcs, reps, func(t uint64) string { return names[t].Name })
	if err != nil {
		return nil, fmt.Errorf("the store's chain %v: %v", p.funcs, err)
	}
	return steps, nil
}

// expanded returns the functions of the shortest path of calls that
// folds to the chain (see query.Expand): the chain's place in a tree of
// calls.
func (p path) expanded() []uint64 {
	var out []uint64
	var cycle func(i int) int // writes the cycle from i, returns past its end
	cycle = func(i int) int {
		start := len(out)
		for i < len(p.funcs) {
			switch t := p.funcs[i]; t {
			case query.CycleEnd:
				out = append(out, out[start:]...)
				return i + 1
			case query.CycleStart:
				i = cycle(i + 1)
			default:
				out = append(out, t)
				i++
			}
		}
		return i
	}
	for i := 0; i < len(p.funcs); {
		if p.funcs[i] == query.CycleStart {
			i = cycle(i + 1)
		} else {
			out = append(out, p.funcs[i])
			i++
		}
	}
	return out
}

// chainPaths returns the paths of chains ids in the selected pushes, and
// the names of their functions.
func (s *Store) chainPaths(ctx context.Context, sel Selection, ids []uint64) (map[uint64]path, map[uint64]tracefile.Func, error) {
	cond, args := s.where(Selection{Service: sel.Service, Labels: sel.Labels, Traces: sel.Traces})
	rows, err := s.conn.Query(ctx, "SELECT id, any(funcs), maxForEach(repeats) FROM "+s.table("chains")+" WHERE id IN ("+list(ids)+") AND "+cond+" GROUP BY id", args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	paths := map[uint64]path{}
	var fids []uint64
	for rows.Next() {
		var id uint64
		var p path
		if err := rows.Scan(&id, &p.funcs, &p.repeats); err != nil {
			return nil, nil, err
		}
		paths[id] = p
		for _, t := range p.funcs {
			if t != query.CycleStart && t != query.CycleEnd {
				fids = append(fids, t)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	names, err := s.names(ctx, fids)
	return paths, names, err
}

// messages fills in the errors each chain's calls returned.
func (s *Store) messages(ctx context.Context, from, cond string, args []any, byID map[uint64]*query.Chain) error {
	counts, err := s.chainErrors(ctx, from, cond, args)
	if err != nil {
		return err
	}
	var eids []uint64
	for _, m := range counts {
		for e := range m {
			eids = append(eids, e)
		}
	}
	errs, err := s.errors(ctx, eids)
	if err != nil {
		return err
	}
	for chain, m := range counts {
		c := byID[chain]
		if c == nil {
			continue
		}
		for e, n := range m {
			c.Messages = append(c.Messages, query.ErrorCount{Error: errs[e], Calls: n})
		}
		query.SortErrors(c.Messages)
	}
	return nil
}

// errors returns errors by id.
func (s *Store) errors(ctx context.Context, ids []uint64) (map[uint64]tracefile.Error, error) {
	out := map[uint64]tracefile.Error{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.conn.Query(ctx, "SELECT id, any(type), any(message) FROM "+s.table("errors")+" WHERE id IN ("+list(ids)+") GROUP BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id uint64
		var e tracefile.Error
		if err := rows.Scan(&id, &e.Type, &e.Message); err != nil {
			return nil, err
		}
		e.Type = tracefile.Printable(e.Type) // the message as a trace keeps it (see tracefile.Error)
		out[id] = e
	}
	return out, rows.Err()
}

// slowest fills in the n slowest of each chain's calls that cond
// chooses: the outermost (those not inside another selected call of the
// chain, as locally; see Selection.outermost).
func (s *Store) slowest(ctx context.Context, from, cond string, args []any, n int, byID map[uint64]*query.Chain) error {
	calls, err := s.slowCalls(ctx, from, cond, args, n)
	if err != nil {
		return err
	}
	return s.addSlowest(ctx, calls, byID)
}

// maxSlowScan bounds the calls of a chain slowestOutside reads to find
// its slowest.
const maxSlowScan = 1 << 14

// slowestOutside fills in the n slowest of each chain's calls that cond
// chooses and that no other call it chooses holds: under --errors, the
// failed calls of a recursion not inside another failed call of it,
// whose failure the row of a call cannot tell when it is written. A call
// inside another of its chain lasts less, or as long, from the same
// start, and is deeper: the calls that hold it come first in the order
// of slowCalls, so they are read in that order, more of them until n are
// found, none is left, or maxSlowScan were read.
func (s *Store) slowestOutside(ctx context.Context, from, cond string, args []any, n int, byID map[uint64]*query.Chain) error {
	var out []slowCall
	pending := cond
	for m := min(4*n, maxSlowScan); ; m = min(4*m, maxSlowScan) {
		calls, err := s.slowCalls(ctx, from, pending, args, m)
		if err != nil {
			return err
		}
		var more []uint64 // chains with fewer than n found and more to read
		for i := 0; i < len(calls); {
			j := i
			for j < len(calls) && calls[j].chain == calls[i].chain {
				j++
			}
			group, found := calls[i:j], []slowCall(nil)
			for k, c := range group {
				if !slices.ContainsFunc(group[:k], c.inside) {
					found = append(found, c)
				}
			}
			if len(found) >= n || len(group) < m || m >= maxSlowScan {
				out = append(out, found[:min(n, len(found))]...)
			} else {
				more = append(more, group[0].chain)
			}
			i = j
		}
		if len(more) == 0 {
			break
		}
		pending = cond + " AND chain IN (" + list(more) + ")"
	}
	return s.addSlowest(ctx, out, byID)
}

// slowCall is a call among a chain's slowest, its start and end Unix
// nanoseconds.
type slowCall struct {
	chain, g, err, push uint64
	start, dur, ended   int64
	depth               uint32
	exit                uint8
}

// inside reports whether call c ran inside call o.
func (c slowCall) inside(o slowCall) bool {
	return c.push == o.push && c.g == o.g && o.depth < c.depth && o.start <= c.start && c.ended <= o.ended
}

// slowCalls returns the n slowest calls of each chain that cond chooses,
// by chain, in the order of query.Slower; of as slow from the same
// start in one goroutine, the outer first.
func (s *Store) slowCalls(ctx context.Context, from, cond string, args []any, n int) ([]slowCall, error) {
	rows, err := s.conn.Query(ctx, fmt.Sprintf(`SELECT chain, goroutine, start, dur, ended, depth, exit, error, push
		FROM %s WHERE %s ORDER BY chain, dur DESC, start, goroutine, depth LIMIT %d BY chain`, from, cond, n), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var all []slowCall
	for rows.Next() {
		var c slowCall
		if err := rows.Scan(&c.chain, &c.g, &c.start, &c.dur, &c.ended, &c.depth, &c.exit, &c.err, &c.push); err != nil {
			return nil, err
		}
		all = append(all, c)
	}
	return all, rows.Err()
}

// addSlowest adds calls to the slowest of their chains in byID, their
// start made since their trace's.
func (s *Store) addSlowest(ctx context.Context, all []slowCall, byID map[uint64]*query.Chain) error {
	if len(all) == 0 {
		return nil
	}
	var eids, pushes []uint64
	for _, c := range all {
		if c.err != 0 {
			eids = append(eids, c.err)
		}
		pushes = append(pushes, c.push)
	}
	errs, err := s.errors(ctx, eids)
	if err != nil {
		return err
	}
	starts := map[uint64]int64{}
	prow, err := s.conn.Query(ctx, "SELECT push, start FROM "+s.table("pushes")+" WHERE push IN ("+list(pushes)+")")
	if err != nil {
		return err
	}
	for prow.Next() {
		var p uint64
		var st int64
		if err := prow.Scan(&p, &st); err != nil {
			prow.Close()
			return err
		}
		starts[p] = st
	}
	prow.Close()
	for _, c := range all {
		ch := byID[c.chain]
		if ch == nil {
			continue
		}
		call := query.Call{G: c.g, StartNs: c.start - starts[c.push], DurationNs: c.dur, Exit: query.ExitName(tracefile.ExitKind(c.exit))}
		if c.err != 0 {
			e := errs[c.err]
			call.Error = &e
		}
		ch.Slowest = append(ch.Slowest, call)
	}
	for _, ch := range byID {
		sort.SliceStable(ch.Slowest, func(i, j int) bool { return query.Slower(ch.Slowest[i], ch.Slowest[j]) })
	}
	return nil
}

// list writes ids as SQL's list of numbers: the client's binding of a
// slice writes an array, which IN does not take on every server.
func list(ids []uint64) string {
	b := make([]byte, 0, 21*len(ids))
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, id, 10)
	}
	return string(b)
}
