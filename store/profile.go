package store

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/tracefile"
)

// Profile returns the selected calls as the local analysis's model: the
// tree of chains, with recursion folded as the store keeps it (each
// chain at the shortest path of calls that folds to it), and every
// function's figures. ClickHouse adds them up by chain; the tree is as
// large as the number of chains, whatever the number of calls. Quantiles
// and the runtime's profiles are not in it.
func (s *Store) Profile(ctx context.Context, sel Selection) (*analysis.Profile, error) {
	cond, args := s.where(sel)
	rows, err := s.conn.Query(ctx, `SELECT chain, count(), sumIf(dur, `+sel.outermost("chain_outer")+`), sumIf(dur, `+sel.outermost("outer")+`), sum(self), sum(dur), min(dur), max(dur), countIf(exit = 1), countIf(`+failed+`)
		FROM `+s.calls(sel)+` WHERE `+cond+` GROUP BY chain`, args...)
	if err != nil {
		return nil, s.noSchema(err)
	}
	type chainRow struct {
		calls, panics, errs     uint64
		total, outer, self, sum int64
		min, max                int64
	}
	byChain := map[uint64]*chainRow{}
	var ids []uint64
	var calls uint64
	for rows.Next() {
		var id uint64
		var c chainRow
		if err := rows.Scan(&id, &c.calls, &c.total, &c.outer, &c.self, &c.sum, &c.min, &c.max, &c.panics, &c.errs); err != nil {
			rows.Close()
			return nil, err
		}
		byChain[id] = &c
		ids = append(ids, id)
		calls += c.calls
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := s.leftOut(ctx, sel, func(chain uint64, d int64) {
		if c := byChain[chain]; c != nil {
			c.self += d
		}
	}); err != nil {
		return nil, err
	}
	p := &analysis.Profile{Root: &analysis.Node{}, Funcs: map[uint32]*analysis.Func{}, Ended: true}
	if len(ids) == 0 {
		return p, nil
	}
	paths, funcs, err := s.chainPaths(ctx, sel, ids)
	if err != nil {
		return nil, err
	}
	// The trace's ids: functions in order of their names.
	fids := make([]uint64, 0, len(funcs))
	for id := range funcs {
		fids = append(fids, id)
	}
	sort.Slice(fids, func(i, j int) bool { return funcs[fids[i]].Name < funcs[fids[j]].Name })
	local := map[uint64]uint32{}
	for i, id := range fids {
		local[id] = uint32(i + 1)
		p.FuncTable = append(p.FuncTable, funcs[id])
	}
	errIDs, err := s.chainErrors(ctx, s.calls(sel), cond, args)
	if err != nil {
		return nil, err
	}
	// The trace's error ids: errors in order of their store ids.
	errLocal := map[uint64]uint32{}
	for _, m := range errIDs {
		for e := range m {
			errLocal[e] = 0
		}
	}
	eids := make([]uint64, 0, len(errLocal))
	for e := range errLocal {
		eids = append(eids, e)
	}
	sort.Slice(eids, func(i, j int) bool { return eids[i] < eids[j] })
	errs, err := s.errors(ctx, eids)
	if err != nil {
		return nil, err
	}
	for i, e := range eids {
		errLocal[e] = uint32(i + 1)
		p.ErrorTable = append(p.ErrorTable, tracefile.Error{Type: errs[e].Type, Message: errs[e].Message})
	}

	// The tree: a node for each chain, under the node of its path less
	// its last function (made if no selected call ran in it).
	nodes := map[string]*analysis.Node{"": p.Root}
	var node func(fs []uint64) *analysis.Node
	node = func(fs []uint64) *analysis.Node {
		key := pathKey(fs)
		if n := nodes[key]; n != nil {
			return n
		}
		parent := node(fs[:len(fs)-1])
		n := &analysis.Node{Func: local[fs[len(fs)-1]], Parent: parent}
		parent.Children = append(parent.Children, n)
		nodes[key] = n
		return n
	}
	sort.Slice(ids, func(i, j int) bool { return len(paths[ids[i]].funcs) < len(paths[ids[j]].funcs) })
	for _, id := range ids {
		fs := paths[id].expanded()
		if len(fs) == 0 {
			continue
		}
		c := byChain[id]
		n := node(fs)
		n.Calls, n.Total, n.Self, n.Max, n.Panics, n.Errors = c.calls, c.total, c.self, c.max, c.panics, c.errs
		f := p.Funcs[n.Func]
		if f == nil {
			f = &analysis.Func{ID: n.Func, Name: funcs[fs[len(fs)-1]].Name, Min: c.min}
			p.Funcs[n.Func] = f
		}
		f.Calls += c.calls
		f.Total += c.outer
		f.Self += c.self
		f.Sum += c.sum
		f.Min = min(f.Min, c.min)
		f.Max = max(f.Max, c.max)
		f.Panics += c.panics
		f.Errors += c.errs
		for e, k := range errIDs[id] {
			if n.ErrorIDs == nil {
				n.ErrorIDs = map[uint32]uint64{}
			}
			n.ErrorIDs[errLocal[e]] += k
			if f.ErrorIDs == nil {
				f.ErrorIDs = map[uint32]uint64{}
			}
			f.ErrorIDs[errLocal[e]] += k
		}
	}
	if err := s.spawnedNodes(ctx, sel, ids, paths, nodes); err != nil {
		return nil, err
	}
	if err := s.quantiles(ctx, s.calls(sel), cond, args, p, local); err != nil {
		return nil, err
	}
	// The time the calls span, and their goroutines: distinct goroutines
	// are few beside calls, so counting them exactly is cheap.
	var first, last int64
	var goroutines uint64
	if err := s.conn.QueryRow(ctx, "SELECT min(start), max(start + dur), uniqExact(push, goroutine) FROM "+s.calls(sel)+" WHERE "+cond, args...).Scan(&first, &last, &goroutines); err != nil {
		return nil, err
	}
	p.Duration = time.Duration(last - first)
	p.Goroutines = int(goroutines)
	p.Stats.Calls = calls
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("the store's calls do not make a valid profile: %w", err)
	}
	return p, nil
}

// leftOut gives, by the chain of their caller, the time of the calls
// sel.Until leaves out whose caller it keeps: the caller's own time, as
// in the local analysis, whose self time is what the calls it shows do
// not take. (A call that began before the window's end may make calls
// after it; Since leaves out no callee of a call it keeps.)
func (s *Store) leftOut(ctx context.Context, sel Selection, add func(chain uint64, d int64)) error {
	if sel.Until.IsZero() {
		return nil
	}
	until := sel.Until.UnixNano()
	callers := sel
	callers.Since, callers.Until = time.Time{}, time.Time{}
	cond, args := s.where(callers)
	cond += fmt.Sprintf(" AND start >= %d AND parent_chain != 0 AND parent_start < %d", until, until)
	if !sel.Since.IsZero() {
		cond += fmt.Sprintf(" AND parent_start >= %d", sel.Since.UnixNano())
	}
	rows, err := s.conn.Query(ctx, "SELECT parent_chain, sum(dur) FROM "+s.calls(sel)+" WHERE "+cond+" GROUP BY parent_chain", args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var chain uint64
		var d int64
		if err := rows.Scan(&chain, &d); err != nil {
			return err
		}
		add(chain, d)
	}
	return rows.Err()
}

// spawnedNodes links the nodes of goroutines' first calls to the nodes
// of the chains that started them, as the local analysis does, where
// both are in the tree.
func (s *Store) spawnedNodes(ctx context.Context, sel Selection, ids []uint64, paths map[uint64]path, nodes map[string]*analysis.Node) error {
	var roots []uint64
	for _, id := range ids {
		if len(paths[id].funcs) == 1 {
			roots = append(roots, id)
		}
	}
	spawned, from, _, err := s.spawners(ctx, sel, roots)
	if err != nil {
		return err
	}
	for r, m := range spawned {
		root := nodes[pathKey(paths[r].expanded())]
		for f, count := range m {
			n := nodes[pathKey(from[f].expanded())]
			if n == nil || n == nodes[""] {
				continue
			}
			if root.SpawnedFrom == nil {
				root.SpawnedFrom = map[*analysis.Node]uint64{}
			}
			root.SpawnedFrom[n] += count
		}
	}
	return nil
}

// quantiles sets the functions' median and 99th percentile, estimated
// from a deterministic sample of their durations.
func (s *Store) quantiles(ctx context.Context, from, cond string, args []any, p *analysis.Profile, local map[uint64]uint32) error {
	rows, err := s.conn.Query(ctx, "SELECT func, quantilesDeterministic(0.5, 0.99)(dur, start) FROM "+from+" WHERE "+cond+" GROUP BY func", args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id uint64
		var qs []int64
		if err := rows.Scan(&id, &qs); err != nil {
			return err
		}
		if f := p.Funcs[local[id]]; f != nil && len(qs) == 2 {
			f.Quantiles = map[float64]int64{0.5: qs[0], 0.99: qs[1]}
		}
	}
	return rows.Err()
}

// chainErrors counts the errors each chain's calls returned.
func (s *Store) chainErrors(ctx context.Context, from, cond string, args []any) (map[uint64]map[uint64]uint64, error) {
	return s.pairCounts(ctx, "SELECT chain, error, count() FROM "+from+" WHERE "+cond+" AND error != 0 GROUP BY chain, error", args)
}

func pathKey(fs []uint64) string {
	b := make([]byte, 0, 8*len(fs))
	for _, f := range fs {
		for i := 0; i < 8; i++ {
			b = append(b, byte(f>>(8*i)))
		}
	}
	return string(b)
}
