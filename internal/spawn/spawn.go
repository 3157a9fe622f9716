package spawn

import (
	"slices"

	"github.com/calltrail/calltrail/internal/gtable"
)

// A Stack is a goroutine's open calls, as the Linker's user keeps them.
type Stack[C comparable] interface {
	// Len is how many calls are open.
	Len() int
	// At returns the function and the chain of the i-th open call, 0
	// the outermost.
	At(i int) (fn uint32, chain C)
	// Latest is the time of the goroutine's latest event read.
	Latest() int64
}

// A Callees is a Stack that also knows the calls its open calls made
// that have returned: Callee returns the chain of a call of fn made by
// the i-th open call, or by a callee of it, if the trace so far has one.
// A goroutine's record is written at its first traced call, which may
// come long after the call holding the go statement returned (a worker
// that waits for its first job): the open call that made that call is
// the one that started the goroutine, not the innermost.
type Callees[C comparable] interface {
	Stack[C]
	Callee(i int, fn uint32) (C, bool)
}

// A Link ties a goroutine to the chain of its parent that started it.
type Link[C comparable] struct {
	G, Parent uint64 // Parent is 0 for a goroutine the trace knows no parent of
	Creator   uint32 // the function that holds the go statement
	At        int64  // when the goroutine's record was written

	Root    C    // the goroutine's first chain
	From    C    // the chain of the parent that started it
	HasRoot bool // Root is known
	HasFrom bool // From is known
	// Again marks the link of a later root chain of a goroutine linked
	// already, which EveryRoot asks for: Root is that chain, From the
	// goroutine's; Parent, Creator and At are not set.
	Again bool

	orphan bool // no call of the parent's was open when it began
	// called marks a From found at the enter of a call of the creator,
	// read before the child began: when the parent's next event finds
	// that call returned, it still is the latest call of the creator,
	// the one that started the child.
	called bool
	// tentative marks a From found at the enter of a call of the
	// creator: the parent's next event after the child began says
	// whether that call was still open then, or a later call of the
	// creator started the child.
	tentative bool
	// early marks a From found in the parent's stack as read when the
	// child's record was, which was before the child began: the
	// parent's events until then are still to come (they were written
	// later), and its next event after the child began says which
	// calls were open, none perhaps.
	early bool
}

// A Linker follows a trace's goroutines and calls the function given to
// New with each goroutine's Link once its chains are known. It holds the
// goroutines still waiting for theirs, at most Max of them.
type Linker[C comparable] struct {
	linked  func(*Link[C])
	max     int
	links   map[uint64]*Link[C]   // by goroutine, until linked
	waiting map[uint64][]*Link[C] // by parent, while the parent has no open call
	// last holds the outermost call that returned last of each of the
	// latest goroutines to have none open (see Idle), lastOrder them
	// in the order they came, to forget the oldest past maxEnded.
	last      map[uint64]endedCall[C]
	lastOrder []uint64
	lastNext  int

	// With EveryRoot: of each goroutine linked, its first chain and the
	// chain that started it; and the other root chains of those that
	// ran more, by goroutine.
	every    bool
	lineages gtable.Table[lineage[C]]
	roots    map[uint64][]C
}

// lineage is what a Linker keeps of a goroutine linked, for EveryRoot.
type lineage[C comparable] struct {
	first, from C
	hasFrom     bool
}

// EveryRoot asks for a link of each root chain of a goroutine besides
// its first, once per chain, marked Again: a goroutine whose outermost
// code is not traced (a server's connection, serving requests of every
// kind; a pool's worker) runs chain after chain, each started from where
// the goroutine was. It costs the size of two chains a goroutine linked.
func (l *Linker[C]) EveryRoot() {
	l.every, l.roots = true, map[uint64][]C{}
}

// Pending are the children a goroutine with open calls started, waiting
// for their chains. The Linker's user keeps them with the goroutine's
// stack, so that a call need not look them up.
type Pending[C comparable] struct {
	links []*Link[C]
	// early counts the links read early added since guess last ran:
	// guess runs once per maxEarly of them, whatever else links holds
	// (children waiting from before the parent's first call, thousands
	// perhaps), so that its passes over links cost a constant a child.
	early int
	// creators has bit Creator%64 set for the Creator of every link:
	// Enter looks for the links of a creator only when its bit is set.
	creators uint64
}

// add puts ks in p's links, which are kept in order of At (and of
// arrival, for the same At): the children an event of the parent
// settles are the first of them. A parent that starts goroutines in a
// loop has its children's records read ahead of its events, from
// several rings, so out of order; each of its events settles a few, and
// a pass over them all would make the children's number squared.
func (p *Pending[C]) add(ks ...*Link[C]) {
	if len(p.links) == 0 {
		p.creators = 0
	}
	for _, k := range ks {
		p.creators |= 1 << (k.Creator % 64)
		n := len(p.links)
		if n == 0 || p.links[n-1].At <= k.At {
			p.links = append(p.links, k)
			continue
		}
		i, _ := slices.BinarySearchFunc(p.links, k.At, func(e *Link[C], at int64) int {
			if e.At <= at {
				return -1 // after the links of the same At
			}
			return 1
		})
		p.links = slices.Insert(p.links, i, k)
	}
}

// Empty reports whether no child waits: then Exit does nothing, nor
// does Enter but for a goroutine's first open call, so that a caller
// may skip them.
func (p *Pending[C]) Empty() bool { return len(p.links) == 0 }

// DefaultMax is how many goroutines a Linker holds waiting for their
// chains, by default.
const DefaultMax = 1 << 16

// New returns a Linker that calls linked with every goroutine's Link,
// once. Past max goroutines waiting (DefaultMax if max is 0), it calls
// linked with all of them, as far as they are known, and forgets them,
// so that its memory does not grow with the trace.
func New[C comparable](max int, linked func(*Link[C])) *Linker[C] {
	if max <= 0 {
		max = DefaultMax
	}
	return &Linker[C]{
		linked:  linked,
		max:     max,
		links:   map[uint64]*Link[C]{},
		waiting: map[uint64][]*Link[C]{},
		last:    map[uint64]endedCall[C]{},
	}
}

// Started tells of goroutine g's record, written at time at: started by
// parent from function creator. parent's stack is its open calls now,
// nil if it has none, and p the children waiting for them. A stack whose
// latest event came before at may show calls that had ended when the
// child began, their exits not read yet (a deep recursion's, written
// after the child's record): the parent's next event after at settles
// which chain it was.
func (l *Linker[C]) Started(g, parent uint64, creator uint32, at int64, stack Stack[C], p *Pending[C]) {
	if len(l.links) >= l.max {
		l.Flush()
	}
	k := &Link[C]{G: g, Parent: parent, Creator: creator, At: at}
	l.links[g] = k
	if parent == 0 {
		return
	}
	if stack != nil && stack.Len() > 0 {
		k.From, k.HasFrom = chainOf(stack, creator), true
		if stack.Latest() < at && p != nil {
			k.tentative, k.early = true, true
			if p.early >= maxEarly {
				l.guess(p)
			}
			p.add(k)
			p.early++
		}
		return
	}
	if e, ok := l.last[parent]; ok && e.fn == creator {
		// Read after the parent's call of the creator returned, with
		// none open: that call started it, unless a later one, read
		// late, began before the child did (the parent's next events
		// say, as for a call of the creator read before the child; a
		// call of another function does not take its place).
		k.From, k.HasFrom, k.tentative, k.called = e.chain, true, true, true
	}
	l.waiting[parent] = append(l.waiting[parent], k)
}

// maxEarly is how many children read early (see Started) a parent holds
// waiting for its next event. A parent in one long call that starts
// goroutine after goroutine reads as early for each, though its stack is
// not behind: past maxEarly, they take the chain its stack showed, and go.
// A stack behind takes as many children as the trace writer put before
// the parent's next event, from other rings: at 1,024, a loop that
// started 1,000 goroutines right after another phase of the program had
// 787 of them set on that phase. A link is some eighty bytes: at 65,536,
// goroutines over a million goroutines started in one call held 6 MB more.
const maxEarly = 1 << 13

// guess gives the children read early that p holds the chains the
// parent's stack showed when they were read, and drops them from p.
func (l *Linker[C]) guess(p *Pending[C]) {
	p.early = 0
	p.links = slices.DeleteFunc(p.links, func(k *Link[C]) bool {
		if !k.early {
			return false // settle drops it if linked or flushed
		}
		if l.links[k.G] != k {
			return true
		}
		k.tentative, k.early = false, false
		l.done(k)
		return true
	})
}

// Enter tells of a call of fn by g at time at, whose chain is chain;
// stack is g's open calls before it, p the children waiting for them.
func (l *Linker[C]) Enter(g uint64, p *Pending[C], fn uint32, at int64, chain C, stack Stack[C]) {
	if stack.Len() == 0 {
		if k := l.links[g]; k != nil && !k.HasRoot {
			k.Root, k.HasRoot = chain, true
			l.done(k)
		} else if l.every {
			l.root(g, chain)
		}
		if w := l.waiting[g]; w != nil {
			p.add(w...)
			delete(l.waiting, g)
		}
	}
	if len(p.links) == 0 {
		return
	}
	l.settle(p, at, stack)
	// Children started from fn before its call was read: this call is
	// the chain they came from if it is still open when they began. A
	// parent that calls fn again and again (a server's connection
	// serving request after request) may have started them from a
	// later call: the parent's first event after they began settles
	// which (settle), and until then this one stands.
	if p.creators&(1<<(fn%64)) == 0 {
		return
	}
	for _, k := range p.links {
		if k.Creator == fn && (!k.HasFrom || k.tentative) && l.links[k.G] == k {
			k.From, k.HasFrom, k.tentative, k.called = chain, true, true, true
		}
	}
}

// Exit tells of the end of g's innermost call at time at; stack is g's
// open calls, that one included, p the children waiting for them.
func (l *Linker[C]) Exit(p *Pending[C], at int64, stack Stack[C]) {
	if len(p.links) > 0 {
		l.settle(p, at, stack)
	}
}

// Idle tells that g has no open call left, its outermost, of fn and
// chain root, having returned: the children p waiting for its calls wait
// for its next. A child of a go statement in fn itself, read before or
// after, came from root: a goroutine a handler starts, which first runs
// after the handler returned.
func (l *Linker[C]) Idle(g uint64, p *Pending[C], fn uint32, root C) {
	l.ended(g, fn, root)
	for _, k := range p.links {
		// A From of a call of the creator stands, though the call
		// ended: the parent's next event says if a later one did.
		if k.early && !k.called {
			if k.Creator == fn {
				// The call that returned holds the go statement: the
				// latest call of the creator, as if read at its enter.
				k.From, k.HasFrom, k.tentative, k.early, k.called = root, true, true, false, true
				continue
			}
			// The calls open when the child's record was read ended
			// before it began: they did not start it.
			var none C
			k.From, k.HasFrom, k.tentative, k.early = none, false, false, false
		}
	}
	if len(p.links) > 0 {
		l.waiting[g] = append(l.waiting[g], p.links...)
	}
	p.links, p.early = nil, 0
}

// maxEnded is how many goroutines' last outermost calls the Linker
// keeps, for the children read after them (see Idle): the latest to end,
// within a few milliseconds of a program's run.
const maxEnded = 1 << 12

// ended keeps g's outermost call that returned, of fn and chain root,
// among the latest maxEnded.
func (l *Linker[C]) ended(g uint64, fn uint32, root C) {
	if _, ok := l.last[g]; !ok {
		if len(l.lastOrder) == maxEnded {
			delete(l.last, l.lastOrder[l.lastNext])
			l.lastOrder[l.lastNext] = g
			l.lastNext = (l.lastNext + 1) % maxEnded
		} else {
			l.lastOrder = append(l.lastOrder, g)
		}
	}
	l.last[g] = endedCall[C]{fn, root}
}

// endedCall is a goroutine's outermost call that returned.
type endedCall[C comparable] struct {
	fn    uint32
	chain C
}

// Flush calls linked with every goroutine still waiting, with what is
// known of it, and forgets them. The Pending its user keeps may still
// hold them: the Linker passes over those.
func (l *Linker[C]) Flush() {
	for _, k := range l.links {
		l.hand(k)
	}
	clear(l.links)
	clear(l.waiting)
}

// settle finds the chains of the children in p started before at, g's
// next event: the calls of g open now were open then. Those g had no
// call open for stay unlinked.
func (l *Linker[C]) settle(p *Pending[C], at int64, stack Stack[C]) {
	i := 0
	for ; i < len(p.links) && p.links[i].At < at; i++ {
		l.resolve(p.links[i], stack)
	}
	if i > 0 {
		clear(p.links[:i])
		p.links = p.links[i:]
	}
}

// resolve settles k, which began before the parent's event now read:
// the parent's calls open now (stack) were open then.
func (l *Linker[C]) resolve(k *Link[C], stack Stack[C]) {
	if l.links[k.G] != k || k.HasFrom && !k.tentative {
		return // linked already, or flushed
	}
	switch {
	case stack.Len() > 0:
		if c, ok := open(stack, k.Creator); ok || !k.called {
			if !ok {
				c = chainOf(stack, k.Creator)
			}
			k.From, k.HasFrom = c, true
		}
		k.tentative, k.early = false, false
		l.done(k)
	case k.called || k.tentative && !k.early:
		// The call of the creator it was tied to is the last open
		// before it began, or the latest call of the creator, which
		// started it and returned.
		k.tentative, k.early = false, false
		l.done(k)
	default:
		// No call of the parent's was open when the child began: none
		// of them started it.
		var none C
		k.From, k.HasFrom, k.tentative, k.early = none, false, false, false
		k.orphan = true
		l.done(k)
	}
}

// done calls linked with k if its chains are known.
func (l *Linker[C]) done(k *Link[C]) {
	if k.HasRoot && (k.HasFrom && !k.tentative || k.Parent == 0 || k.orphan) {
		l.give(k)
	}
}

func (l *Linker[C]) give(k *Link[C]) {
	delete(l.links, k.G)
	l.hand(k)
}

// hand calls linked with k and, with EveryRoot, keeps k's goroutine's
// lineage, and links the other root chains it ran before.
func (l *Linker[C]) hand(k *Link[C]) {
	l.linked(k)
	if !l.every || !k.HasRoot {
		return
	}
	ln, _ := l.lineages.Put(k.G)
	ln.first, ln.from, ln.hasFrom = k.Root, k.From, k.HasFrom
	if k.HasFrom {
		for _, r := range l.roots[k.G] {
			l.linked(&Link[C]{G: k.G, Root: r, From: k.From, HasRoot: true, HasFrom: true, Again: true})
		}
	}
}

// root takes in a root chain of goroutine g after its first, with
// EveryRoot: linked once g is, and once per chain.
func (l *Linker[C]) root(g uint64, chain C) {
	ln := l.lineages.Get(g)
	var first C
	switch {
	case ln != nil:
		first = ln.first
	case l.links[g] != nil && l.links[g].HasRoot:
		first = l.links[g].Root // linked later, with the chains kept here
	default:
		return // no record of g read, or forgotten past Max
	}
	if chain == first || slices.Contains(l.roots[g], chain) {
		return
	}
	l.roots[g] = append(l.roots[g], chain)
	if ln != nil && ln.hasFrom {
		l.linked(&Link[C]{G: g, Root: chain, From: ln.from, HasRoot: true, HasFrom: true, Again: true})
	}
}

// chainOf returns the chain of stack's innermost call of fn or, if none
// is open, of the call of fn an open call made, the innermost that made
// one (see Callees), or else of the innermost call.
func chainOf[C comparable](stack Stack[C], fn uint32) C {
	if c, ok := open(stack, fn); ok {
		return c
	}
	n := stack.Len()
	if cs, ok := stack.(Callees[C]); ok {
		for i := n - 1; i >= 0; i-- {
			if c, ok := cs.Callee(i, fn); ok {
				return c
			}
		}
	}
	_, c := stack.At(n - 1)
	return c
}

// open returns the chain of stack's innermost open call of fn.
func open[C comparable](stack Stack[C], fn uint32) (C, bool) {
	for i := stack.Len() - 1; i >= 0; i-- {
		if f, c := stack.At(i); f == fn {
			return c, true
		}
	}
	var none C
	return none, false
}
