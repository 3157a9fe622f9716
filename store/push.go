package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/calltrail/calltrail/internal/spawn"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/spans"
	"github.com/calltrail/calltrail/tracefile"
)

// Meta is what a push says of the process a trace came from.
type Meta struct {
	Service string   // the service, or program, name; default: the trace's program
	Labels  []string // k=v pairs: version=1.4, host=a, run=123
}

// Pushed is what Push did.
type Pushed struct {
	Trace   string // the trace's id: its SHA-256, in hex, cut to 32 digits
	Calls   uint64 // calls stored
	Already bool   // the trace was in the store already: nothing written
	Warning string // the trace was damaged: what could be read was stored
}

// BatchRows is how many rows of calls a push sends at once: its memory
// is about 100 bytes a row, whatever the trace's size.
const BatchRows = 100_000

// FuncID is the id of a function in the store: a hash of its name, the
// same in every trace.
func FuncID(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64() | 1 // never 0, which means none
}

// chainID is the id of the chain that goes on from parent to fn.
func chainID(parent, fn uint64) uint64 {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], parent)
	binary.LittleEndian.PutUint64(b[8:], fn)
	h := fnv.New64a()
	h.Write(b[:])
	return h.Sum64() | 1
}

// errorID is the id of an error in the store.
func errorID(e tracefile.Error) uint64 { return FuncID(e.Type + "\x00" + e.Message) }

// failed is the SQL condition of a call that failed: it returned an
// error, and not one of tracefile.Ends, as the local analysis counts.
var failed = func() string {
	ids := []string{"0"}
	for e := range ends {
		ids = append(ids, strconv.FormatUint(e, 10))
	}
	sort.Strings(ids[1:])
	return "error NOT IN (" + strings.Join(ids, ", ") + ")"
}()

// ends are the store's ids of the errors that end a call without its
// failing (tracefile.Ends).
var ends = func() map[uint64]bool {
	m := map[uint64]bool{}
	for _, e := range tracefile.Ends {
		m[errorID(e)] = true
	}
	return m
}()

// pick returns a if c, else b.
func pick(c bool, a, b int64) int64 {
	if c {
		return a
	}
	return b
}

// TraceID returns the id of the trace file at path.
func TraceID(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// Push stores the trace file at path, streaming, and calls progress, if
// not nil, with the bytes read so far and the file's size. The store
// must have its tables (see Init).
func (s *Store) Push(ctx context.Context, path string, meta Meta, progress func(done, size int64)) (Pushed, error) {
	id, err := TraceID(path)
	if err != nil {
		return Pushed{}, err
	}
	out := Pushed{Trace: id}
	var n uint64
	if err := s.conn.QueryRow(ctx, "SELECT count() FROM "+s.table("pushes")+" WHERE trace = ?", id).Scan(&n); err != nil {
		return out, err
	}
	if n > 0 {
		out.Already = true
		return out, nil
	}
	return s.push(ctx, out, path, meta, progress)
}

// push stores the trace at path, whatever the store holds: out.Trace is
// its id.
func (s *Store) push(ctx context.Context, out Pushed, path string, meta Meta, progress func(done, size int64)) (Pushed, error) {
	// A first pass finds the requests (OpenTelemetry spans) the calls
	// ran for, so that each row carries its request's trace id.
	f, err := tracefile.Open(path)
	if err != nil {
		return out, err
	}
	ix, err := spans.Read(f.Reader)
	f.Close()
	if err != nil && !tracefile.IsIncomplete(err) {
		return out, fmt.Errorf("%s: %w", path, err)
	}
	if f, err = tracefile.Open(path); err != nil {
		return out, err
	}
	defer f.Close()
	f.InheritSpans(ix.Inherit)
	st, err := f.Stat()
	if err != nil {
		return out, err
	}
	r := f.Reader
	var pushID uint64
	var rb [8]byte
	rand.Read(rb[:])
	pushID = binary.LittleEndian.Uint64(rb[:]) | 1
	start := r.Meta().Start
	if start.IsZero() {
		start = time.Now()
	}
	p := &pusher{s: s, ctx: ctx, r: r, push: pushID, start: start.UnixNano(), gs: map[uint64]*gstate{}, funcs: map[uint32]uint64{}, errs: map[uint32]uint64{}, traces: map[tracefile.SpanID]string{}, inherit: ix.Inherit, firstSpan: map[uint64]tracefile.SpanID{},
		folder: query.NewFolder(func(id uint32) string { return r.Func(id).Name }), callRows: rowBatch{table: "calls"}, requestRows: rowBatch{table: "request_calls"}}
	p.links = spawn.New(maxSpawns, p.linked)
	p.links.EveryRoot() // as the local analysis links them
	if err := p.run(progress, st.Size()); err != nil {
		if !tracefile.IsIncomplete(err) {
			return out, s.abandon(ctx, pushID, fmt.Errorf("%s: %w", path, err))
		}
		out.Warning = err.Error()
	}
	if err := p.finish(); err != nil {
		return out, s.abandon(ctx, pushID, err)
	}
	service := meta.Service
	if service == "" {
		service = r.Meta().Program
	}
	labels := append([]string{}, meta.Labels...)
	sort.Strings(labels)
	stats := r.Stats()
	// The commit: from here on, queries see the push's rows. Were it to
	// fail, it may still have landed: its rows stay, and pushing again
	// either says the trace is stored or stores it.
	if err := s.insert(ctx, "pushes", [][]any{{pushID, out.Trace, service, labels, r.Meta().Program, p.start, p.start + r.MaxTime(), p.calls, stats.DroppedCalls, time.Now(), uint8(1)}}); err != nil {
		return out, fmt.Errorf("%w (the push may not have committed: push the trace again)", err)
	}
	out.Calls = p.calls
	return out, nil
}

// abandon deletes the rows a push wrote before err stopped it short of
// its commit. No query reads them; deleted, they take no space either.
// An interrupt ends ctx: the deletion outlives it, for a while.
func (s *Store) abandon(ctx context.Context, push uint64, err error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	derr := s.everyServer(ctx, func(conn driver.Conn, suffix string) error {
		for _, t := range schema {
			if t.name == "pushes" || !slices.Contains(columns(t.columns), "push UInt64") {
				continue
			}
			// A mutation, which the server carries out after it answers.
			if err := conn.Exec(ctx, "ALTER TABLE "+s.table(t.name)+suffix+" DELETE WHERE push = ?", push); err != nil {
				return err
			}
		}
		return nil
	})
	if derr != nil {
		return fmt.Errorf("%w (nothing committed; %w: %v)", err, ErrRowsLeft, derr)
	}
	return err
}

// ErrRowsLeft says that a push that failed could not delete the rows it
// wrote: no query reads them, but they take space until dropped.
var ErrRowsLeft = errors.New("the rows written could not be deleted")

// table is the name of a table of the store, with its database.
func (s *Store) table(name string) string { return s.cfg.Database + "." + name }

type pusher struct {
	s     *Store
	ctx   context.Context
	r     *tracefile.Reader
	push  uint64
	start int64 // the trace's start, Unix nanoseconds
	calls uint64

	gs         map[uint64]*gstate
	folder     *query.Folder
	nodes      []*node                     // every chain, by its number in folder
	goroutines [][]any                     // rows of the goroutines table not sent yet
	links      *spawn.Linker[chains]       // goroutines whose row waits for a chain, by goroutine
	funcs      map[uint32]uint64           // the trace's function ids to the store's
	errs       map[uint32]uint64           // and its error ids
	traces     map[tracefile.SpanID]string // the trace id of each span, in hex
	// The span each goroutine was started under, and, for the others,
	// the span of its first call, if any: a goroutine's row carries
	// the trace id of the request it ran for.
	inherit   map[uint64]tracefile.SpanID
	firstSpan map[uint64]tracefile.SpanID

	callRows, requestRows rowBatch // the rows of calls and of request_calls not sent yet
	counts                []uint32 // scratch for node
}

// rowBatch is the rows of a table of calls not sent yet.
type rowBatch struct {
	table string
	b     driver.Batch
	rows  int
}

// gstate is a goroutine's open calls: all of them, and apart, those of
// each request, as the calls of that request alone hold them (the rows
// of request_calls).
type gstate struct {
	p        *pusher
	calls    callStack
	requests map[string]*callStack // by trace id, while it has open calls
	pending  spawn.Pending[chains]
	latest   int64 // the time of its latest enter or exit read
}

// callStack is a goroutine's open calls, or those of one request of it.
type callStack struct {
	frames []frame
	// The innermost open call of each function, and of each chain: its
	// index in frames plus one.
	open   map[uint64]int32
	inNode map[int32]int32
}

func newCallStack() *callStack {
	return &callStack{open: map[uint64]int32{}, inNode: map[int32]int32{}}
}

// Len, At and Latest make a goroutine's open calls a spawn.Stack of
// chain ids.
func (g *gstate) Len() int { return len(g.calls.frames) }

func (g *gstate) Latest() int64 { return g.latest }

func (g *gstate) At(i int) (uint32, chains) {
	f := &g.calls.frames[i]
	return f.traceFn, chains{all: f.node.id, request: f.request}
}

// Callee makes the open calls a spawn.Callees, as the local analysis's
// are: the chain of a call of fn the i-th made, if the push has read one
// of that chain.
func (g *gstate) Callee(i int, fn uint32) (chains, bool) {
	f := &g.calls.frames[i]
	c, ok := g.p.folder.Made(f.chain, fn)
	if !ok {
		return chains{}, false
	}
	return chains{all: g.p.node(c).id, request: f.request}, true
}

// maxSpawns bounds the goroutines a push holds waiting for their chains:
// past it, they are written with what is known, so that a push's memory
// does not grow with the trace. A variable for tests.
var maxSpawns = spawn.DefaultMax

type frame struct {
	fn       uint64 // the store's id
	traceFn  uint32 // the trace's
	chain    query.Folded
	node     *node
	request  uint64 // the id of its chain among its request's calls alone, 0 for none
	start    int64  // Unix nanoseconds
	children int64  // time in traced callees
	// upFn and upNode are the innermost open call of the same function,
	// and of the same chain, when this one began: index in frames plus
	// one, 0 for none.
	upFn, upNode int32
	// failedInner and panickedInner are the time of the calls of its
	// chain inside this one that failed, and that panicked, not inside
	// another that did: the part of its chain's total under --errors
	// (--panics) these hold (see Store.Chains).
	failedInner, panickedInner int64
}

// chains are the ids of a call's chain, and of its chain among the
// calls of its request alone (0 for none): what the goroutines table
// ties goroutines to. A goroutine's root call keeps its span too, for the
// row of a later root chain (see linked).
type chains struct {
	all, request uint64
	span         tracefile.SpanID
}

// idOf returns n's id, 0 for no node.
func (n *node) idOf() uint64 {
	if n == nil {
		return 0
	}
	return n.id
}

// node is a chain with recursion folded, as the query package folds it,
// written as tokens (see query.Encode), its id their hash.
type node struct {
	id      uint64
	tokens  []uint64
	repeats []uint32 // the most times each step ran, as query.Folded.Counts gives them
}

// node returns the node of chain c, with its repeats made at least c's.
func (p *pusher) node(c query.Folded) *node {
	k := c.Chain()
	for int(k) >= len(p.nodes) {
		p.nodes = append(p.nodes, nil)
	}
	n := p.nodes[k]
	if n == nil {
		n = &node{tokens: query.Encode(nil, p.folder.Steps(c, false), FuncID)}
		for _, t := range n.tokens {
			n.id = chainID(n.id, t)
		}
		p.nodes[k] = n
	}
	p.counts = c.Counts(p.counts[:0])
	if len(n.repeats) != len(p.counts) {
		n.repeats = make([]uint32, len(p.counts))
	}
	for i, r := range p.counts {
		n.repeats[i] = max(n.repeats[i], r)
	}
	return n
}

func (p *pusher) run(progress func(done, size int64), size int64) error {
	var last time.Time
	var ev tracefile.Event
	for {
		err := p.r.Read(&ev)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if progress != nil && time.Since(last) > 200*time.Millisecond {
			progress(p.r.Offset(), size)
			last = time.Now()
		}
		switch ev.Kind {
		case tracefile.GoroutineEvent:
			if err := p.goroutine(ev.G, ev.Time); err != nil {
				return err
			}
		case tracefile.EnterEvent:
			g := p.gs[ev.G]
			if g == nil {
				g = &gstate{p: p, calls: *newCallStack()}
				p.gs[ev.G] = g
			}
			fn := p.fn(ev.Func)
			if len(g.calls.frames) == 0 {
				if _, seen := p.firstSpan[ev.G]; !seen && ev.Span.IsValid() && len(p.firstSpan) < maxSpawns {
					p.firstSpan[ev.G] = ev.Span
				}
			}
			// The call's chain, and among its request's calls alone.
			chain, n := g.calls.chainOf(p, ev.Func)
			var rs *callStack
			var rchain query.Folded
			var rn *node
			if id := p.traceID(ev.Span); id != "" {
				if rs = g.requests[id]; rs == nil {
					if g.requests == nil {
						g.requests = map[string]*callStack{}
					}
					rs = newCallStack()
					g.requests[id] = rs
				}
				rchain, rn = rs.chainOf(p, ev.Func)
			}
			// The linker sees the open calls of the goroutine before
			// this one.
			p.links.Enter(ev.G, &g.pending, ev.Func, ev.Time, chains{n.id, rn.idOf(), ev.Span}, g)
			g.calls.push(fn, ev.Func, chain, n, rn.idOf(), p.start+ev.Time)
			g.latest = ev.Time
			if rs != nil {
				rs.push(fn, ev.Func, rchain, rn, 0, p.start+ev.Time)
			}
			if err := p.sendGoroutines(false); err != nil {
				return err
			}
		case tracefile.ExitEvent:
			g := p.gs[ev.G]
			if g == nil || len(g.calls.frames) == 0 {
				continue
			}
			p.links.Exit(&g.pending, ev.Time, g)
			rootFn, root := g.At(0) // as the linker saw it at its enter
			g.latest = ev.Time
			var errID uint64
			if ev.Err != 0 {
				errID = p.err(ev.Err)
			}
			id := p.traceID(ev.Span)
			if err := p.callRows.add(p, g.calls.exit(p, &ev, uint32(ev.Depth), errID, id)); err != nil {
				return err
			}
			if len(g.calls.frames) == 0 {
				delete(p.gs, ev.G)
				p.links.Idle(ev.G, &g.pending, rootFn, root)
			}
			if rs := g.requests[id]; rs != nil && len(rs.frames) > 0 {
				if err := p.requestRows.add(p, rs.exit(p, &ev, uint32(len(rs.frames)), errID, id)); err != nil {
					return err
				}
				if len(rs.frames) == 0 {
					delete(g.requests, id)
				}
			}
		}
	}
}

// chainOf returns the chain, and its node, of a call of traceFn that
// opens on the stack.
func (st *callStack) chainOf(p *pusher, traceFn uint32) (query.Folded, *node) {
	chain := p.folder.Empty()
	if len(st.frames) > 0 {
		chain = st.frames[len(st.frames)-1].chain
	}
	chain = p.folder.Push(chain, traceFn)
	return chain, p.node(chain)
}

// push opens a call of function fn (traceFn in the trace), begun at
// start (Unix nanoseconds), of the chain and node chainOf gave, and of
// chain id request among its request's calls alone (0 for none).
func (st *callStack) push(fn uint64, traceFn uint32, chain query.Folded, n *node, request uint64, start int64) {
	top := int32(len(st.frames)) + 1
	st.frames = append(st.frames, frame{fn: fn, traceFn: traceFn, chain: chain, node: n, request: request, start: start, upFn: st.open[fn], upNode: st.inNode[chain.Chain()]})
	st.open[fn], st.inNode[chain.Chain()] = top, top
}

// exit closes the innermost call of the stack, at depth, with ev, its
// exit, which returned error errID and ran for request traceID, and
// returns its row.
func (st *callStack) exit(p *pusher, ev *tracefile.Event, depth uint32, errID uint64, traceID string) []any {
	fr := st.frames[len(st.frames)-1]
	st.frames = st.frames[:len(st.frames)-1]
	// A call of a recursion counts in its function's total, and its
	// chain's, when no outer call of the same is among the calls a
	// query chooses: the row keeps when the outer call began (see
	// Selection.outermost), or its own start for none.
	outer, outerStart := uint8(1), fr.start
	if fr.upFn != 0 {
		outer, outerStart = 0, st.frames[fr.upFn-1].start
		st.open[fr.fn] = fr.upFn
	} else {
		delete(st.open, fr.fn)
	}
	chainOuter, chainOuterStart := uint8(1), fr.start
	if fr.upNode != 0 {
		chainOuter, chainOuterStart = 0, st.frames[fr.upNode-1].start
		st.inNode[fr.chain.Chain()] = fr.upNode
	} else {
		delete(st.inNode, fr.chain.Chain())
	}
	// Its caller, whose own time it becomes when a query leaves it out
	// but not the caller (see Store.Profile).
	var parentStart int64
	var parentChain uint64
	d := int64(ev.Duration())
	if len(st.frames) > 0 {
		parent := &st.frames[len(st.frames)-1]
		parent.children += d
		parentStart, parentChain = parent.start, parent.node.id
	}
	if fr.upNode != 0 {
		up := &st.frames[fr.upNode-1]
		up.failedInner += pick(errID != 0 && !ends[errID], d, fr.failedInner)
		up.panickedInner += pick(ev.Exit == tracefile.Panic, d, fr.panickedInner)
	}
	return []any{time.Unix(0, p.start+ev.Start).UTC(), ev.G, fr.fn, fr.node.id, p.start + ev.Start, d, d - fr.children, depth, outer, chainOuter, uint8(ev.Exit), errID, traceID,
		outerStart, chainOuterStart, parentStart, parentChain, fr.failedInner, fr.panickedInner, p.start + ev.Time}
}

// add appends a row to the batch, and sends the batch once it is full.
func (b *rowBatch) add(p *pusher, vals []any) error {
	if b.b == nil {
		batch, err := p.s.conn.PrepareBatch(p.ctx, "INSERT INTO "+p.s.table(b.table)+" (date, goroutine, func, chain, start, dur, self, depth, outer, chain_outer, exit, error, trace_id, outer_start, chain_outer_start, parent_start, parent_chain, chain_failed_inner, chain_panicked_inner, ended, push)")
		if err != nil {
			return err
		}
		b.b = batch
	}
	if err := b.b.Append(append(vals, p.push)...); err != nil {
		return err
	}
	if b == &p.callRows {
		p.calls++
	}
	b.rows++
	if b.rows >= BatchRows {
		return b.send()
	}
	return nil
}

// traceID returns the trace id, in hex, of the request span ran for; ""
// for no span.
func (p *pusher) traceID(span tracefile.SpanID) string {
	if !span.IsValid() {
		return ""
	}
	t, ok := p.traces[span]
	if !ok {
		if s, ok := p.r.Span(span); ok && s.Trace.IsValid() {
			t = s.Trace.String()
		}
		if len(p.traces) < 1<<16 {
			p.traces[span] = t
		}
	}
	return t
}

func (b *rowBatch) send() error {
	if b.b == nil {
		return nil
	}
	err := b.b.Send()
	b.b, b.rows = nil, 0
	return err
}

// fn returns the store's id of the trace's function id; finish writes
// the rows of the functions met.
func (p *pusher) fn(id uint32) uint64 {
	if sid, ok := p.funcs[id]; ok {
		return sid
	}
	sid := FuncID(p.r.Func(id).Name)
	p.funcs[id] = sid
	return sid
}

func (p *pusher) err(id uint32) uint64 {
	if sid, ok := p.errs[id]; ok {
		return sid
	}
	sid := errorID(p.r.Error(id))
	p.errs[id] = sid
	return sid
}

func (p *pusher) goroutine(g uint64, at int64) error {
	info, ok := p.r.Goroutine(g)
	if !ok {
		return nil
	}
	var stack spawn.Stack[chains]
	var pending *spawn.Pending[chains]
	if pg := p.gs[info.Parent]; pg != nil {
		stack, pending = pg, &pg.pending
	}
	p.links.Started(g, info.Parent, info.CreatorFunc, at, stack, pending)
	return p.sendGoroutines(false)
}

// linked makes the row of a goroutine of the goroutines table, with the
// chain of its first call (root) and the chain of its parent that
// started it (from), as the local analysis finds them.
//
// A later root chain of a goroutine (spawn.Link.Again) makes a row of its
// own, of the request its root call served: one request's view links a
// goroutine's later chain to the chain that started the goroutine when
// both are the request's, as the local analysis narrowed to it does (a
// goroutine started in a request that runs chain after chain for it).
func (p *pusher) linked(l *spawn.Link[chains]) {
	info, _ := p.r.Goroutine(l.G)
	var creator uint64
	if info.CreatorFunc != 0 {
		creator = p.fn(info.CreatorFunc)
	}
	if l.Again {
		p.goroutines = append(p.goroutines, []any{p.push, l.G, info.Parent, creator, info.FirstSeen, l.Root.all, l.From.all, p.traceID(l.Root.span), l.Root.request, l.From.request})
		return
	}
	span, ok := p.inherit[l.G]
	if !ok {
		span = p.firstSpan[l.G]
	}
	delete(p.firstSpan, l.G)
	p.goroutines = append(p.goroutines, []any{p.push, l.G, l.Parent, creator, info.FirstSeen, l.Root.all, l.From.all, p.traceID(span), l.Root.request, l.From.request})
}

// sendGoroutines sends the rows of the goroutines table made so far, if
// they make a batch or all is true.
func (p *pusher) sendGoroutines(all bool) error {
	if len(p.goroutines) == 0 || !all && len(p.goroutines) < BatchRows {
		return nil
	}
	err := p.s.insert(p.ctx, "goroutines", p.goroutines)
	p.goroutines = p.goroutines[:0]
	return err
}

// finish sends the last calls, then the chains, functions, errors and
// profiles the calls refer to.
func (p *pusher) finish() error {
	if err := p.callRows.send(); err != nil {
		return err
	}
	if err := p.requestRows.send(); err != nil {
		return err
	}
	p.links.Flush()
	if err := p.sendGoroutines(true); err != nil {
		return err
	}
	var chains, funcs, errs, profiles [][]any
	for _, n := range p.nodes {
		if n != nil {
			chains = append(chains, []any{p.push, n.id, n.tokens, n.repeats})
		}
	}
	for id, sid := range p.funcs {
		f := p.r.Func(id)
		funcs = append(funcs, []any{sid, f.Name, f.File, uint32(f.Line)})
	}
	for id, sid := range p.errs {
		e := p.r.Error(id)
		errs = append(errs, []any{sid, e.Type, e.Message})
	}
	for kind, data := range p.r.Profiles() {
		profiles = append(profiles, []any{p.push, kind, string(data)})
	}
	for _, t := range []struct {
		name string
		rows [][]any
	}{{"chains", chains}, {"functions", funcs}, {"errors", errs}, {"profiles", profiles}} {
		if err := p.s.insert(p.ctx, t.name, t.rows); err != nil {
			return err
		}
	}
	return nil
}

// insert writes rows, in the order of its columns, to a table of the
// store in one batch.
func (s *Store) insert(ctx context.Context, table string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	// The columns by name: a store upgraded from an earlier schema has
	// its added columns last, wherever the schema has them.
	b, err := s.conn.PrepareBatch(ctx, "INSERT INTO "+s.table(table)+" ("+strings.Join(columnNames(table), ", ")+")")
	if err != nil {
		return err
	}
	for _, row := range rows {
		if err := b.Append(row...); err != nil {
			return err
		}
	}
	return b.Send()
}
