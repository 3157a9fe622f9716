package calltrail

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/calltrail/calltrail/internal/clock"
	"github.com/calltrail/calltrail/internal/gstate"
	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/ring"
	"github.com/calltrail/calltrail/internal/tracewrite"
)

// A tracer owns the rings of one trace and the writer that empties them.
// A program has one, started by init when built with the calltrail tag;
// tests make their own.
type tracer struct {
	// Under fullWait, rings[:perP] are the rings of the Ps and
	// rings[perP] the shared one (see claim); under fullDrop, perP is
	// 0 and a goroutine's ring is rings[g&ringMask].
	rings     []ring.Ring
	perP      int
	pRings    []ring.Ring // rings[:perP], for the hot path's one bounds check
	ringMask  uint64
	where     []atomic.Uint64 // by goroutine: its latest ring, see claim
	whereMask uint64
	owned     []atomic.Pointer[ring.Ring] // by g (ownedKey): the ring its goroutine last came to own, for the assembly hot path
	barriers  atomic.Uint64               // numbers barriers, see claim
	waitqs    []waitq                     // per ring: goroutines waiting for room
	policy    fullPolicy                  // what a goroutine does when its ring is full
	seen      []atomic.Uint64             // goroutines whose creation record is in a ring
	seenMask  uint64
	reg       registry
	errs      errorTable
	spans     spanTable
	w         *writer

	stopping atomic.Bool // the trace is closing: nobody waits for room any more
}

// What a goroutine does when its ring is full.
type fullPolicy uint8

const (
	// fullWait: the goroutine waits until the writer has made room, so
	// no call is lost; the time it waits is counted.
	fullWait fullPolicy = iota
	// fullDrop: the call is dropped, whole, and counted; the program
	// never waits. An enter is admitted only if the slot of its exit
	// can be promised too.
	fullDrop
	// A third policy, overwriting the oldest events, fits here: its
	// full handler moves the tail itself instead of waiting for the
	// writer, and, as with fullWait, exits reserve their own slots.
)

// waitq is where goroutines wait for room in one ring. The writer
// broadcasts after each pass over the rings while anyone waits.
type waitq struct {
	waiters atomic.Int32
	mu      sync.Mutex
	cond    sync.Cond
}

// stamp returns the calling goroutine's id and the time.
func stamp() (g uint64, ts int64) {
	if !gstate.Fast() {
		return stampSlow()
	}
	g, _, ticks := gstate.State()
	return g & gMask, clock.Units(ticks)
}

// stampSlow is stamp where the goroutine id comes from the stack.
//
//go:noinline
func stampSlow() (g uint64, ts int64) {
	return gstate.StackGoid() & gMask, clock.Nanotime()
}

// enter records the calling goroutine's entry into f, giving f its id the
// first time.
//
// It is nosplit, and so never preempted but in the functions it calls
// (see gstate.StateP): from reading the P it runs on to writing the
// event in that P's ring, the goroutine stays on the P, as if pinned,
// without the two calls pinning takes. TestHotPathCalls checks that
// nothing there is a call to a function that could be preempted.
//
//go:nosplit
//go:noinline
func (t *tracer) enter(f *Func) Call {
	id := f.id.Load()
	if id == 0 {
		if id = t.register(f); id == 0 {
			// No id left for f: its calls are lost, and counted so.
			t.rings[0].Dropped.Add(1)
			return 0
		}
	}
	g, ts, p := uint64(0), int64(0), -1 // stamp, with the P
	if gstate.Fast() {
		var ticks int64
		g, _, ticks, p = gstate.StateP()
		g, ts = g&gMask, clock.Units(ticks)
	} else {
		g, ts = stampSlow()
	}
	c := newCall(g, id)
	// claim, by hand for its common case: the goroutine owns its P's
	// ring (see claim), which has room. Under fullDrop there are no
	// rings of Ps.
	if uint(p) < uint(len(t.pRings)) {
		s := &t.pRings[p]
		if s.Owner() == g {
			if pos, ok := s.Take(1); ok {
				ring.Put(s.At(pos), c.word(), ts)
				return c
			}
		}
	}
	if t.seen[g&t.seenMask].Load() != g {
		return t.enterFirst(g, id, ts)
	}
	if t.perP != 0 {
		return t.enterClaim(c, g, ts)
	}
	s := &t.rings[g&t.ringMask]
	pos, ok := s.Reserve(1, 1)
	if !ok {
		s.Dropped.Add(1)
		return 0
	}
	ring.Put(s.At(pos), c.word(), ts)
	return c
}

// enterClaim records enter c of goroutine g at ts where the hot path
// could not: after a barrier, in the shared ring, or once its ring has
// room (fullWait). A wait was the caller's time, not the call's: the
// call starts after it, and the wait is noted in the caller.
//
//go:noinline
func (t *tracer) enterClaim(c Call, g uint64, ts int64) Call {
	i, pos, from, to, ok := t.claimWait(g, 1, upto{})
	if !ok {
		return 0
	}
	if from != 0 {
		ts = max(ts, to)
	}
	ring.Put(t.rings[i].At(pos), c.word(), ts)
	procUnpin()
	if from != 0 {
		t.noteHeld(g, from, ts)
	}
	return c
}

// take takes n slots for goroutine g's events at ts, as the policy says:
// under fullWait, pinned to its P until the caller calls procUnpin (see
// claim), waiting while the ring is full, and returning the time after
// the wait, which was the caller's, not the events'; under fullDrop, in
// g's ring, refusing when it is full and counting the call as dropped.
// It reports whether the events are to be recorded.
func (t *tracer) take(g, n uint64, ts int64, lim upto) (*ring.Ring, uint64, int64, bool) {
	if t.perP != 0 {
		i, pos, from, to, ok := t.claimWait(g, n, lim)
		if !ok {
			return nil, 0, 0, false
		}
		if from != 0 {
			ts = max(ts, to)
		}
		return &t.rings[i], pos, ts, true
	}
	s := &t.rings[g&t.ringMask]
	pos, ok := s.Reserve(n, 1)
	if !ok {
		s.Dropped.Add(1)
	}
	return s, pos, ts, ok
}

// unpin ends what take began.
func (t *tracer) unpin() {
	if t.perP != 0 {
		procUnpin()
	}
}

// enterFirst records a goroutine's first traced call, after the record of
// the goroutine itself: its parent, and where it was created and started.
// The call is marked callRoot.
//
//go:noinline
func (t *tracer) enterFirst(g uint64, id uint32, ts int64) Call {
	if t.seen[g&t.seenMask].Load() == g|quiet {
		return 0 // calltrail itself is calling an error's Error method
	}
	s, pos, ts, ok := t.take(g, 4, ts, upto{})
	if !ok {
		return 0 // the record waits for the goroutine's next call
	}
	t.seen[g&t.seenMask].Store(g)
	parent, gopc, startpc := gstate.Info()
	// The record's words are published like events': the writer's
	// encoder loads a slot's word ahead of knowing the slot before it
	// is written, and drops what it read; a plain store here would race
	// with that load.
	ring.Put(s.At(pos+1), parent, int64(gopc))
	ring.Put(s.At(pos+2), 0, int64(startpc))
	ring.Put(s.At(pos), g<<opBits|tracewrite.RawGoroutineOp, ts)
	call := newCall(g, id) | callRoot
	ring.Put(s.At(pos+3), call.word(), ts)
	t.unpin()
	return call
}

// Function ids as Func keeps them carry a flag: idMain marks main.main.
const (
	idMainBit = 31
	idMain    = 1 << idMainBit
)

func (t *tracer) register(f *Func) uint32 {
	id := t.reg.enter(f.Name, f.File, f.Line)
	if id != 0 && f.Name == "main.main" {
		id |= idMain
	}
	f.id.Store(id)
	return id
}

// exitClaim records the exit at ts of call c, with error errID if any,
// where the hot path could not: after a barrier, in the shared ring, or
// once its ring has room (fullWait), with the wait for the writer after
// it: the call ended at ts, and the wait is its caller's time.
//
//go:noinline
func (t *tracer) exitClaim(c Call, errID uint32, kind records.ExitKind, ts int64) {
	g := c.goroutine()
	n := uint64(1)
	if errID != 0 {
		n = 2
	}
	i, pos, from, to, ok := t.claimWait(g, n, upto{})
	if !ok {
		return // the trace is closing: the call reads as unfinished
	}
	putExit(&t.rings[i], pos, c, errID, kind, ts)
	procUnpin()
	if from != 0 {
		t.noteHeld(g, max(from, ts), max(to, ts))
	}
}

// putExit writes, at pos of s, the exit of call c at ts, of kind, after
// its error errID if any.
func putExit(s *ring.Ring, pos uint64, c Call, errID uint32, kind records.ExitKind, ts int64) {
	if errID != 0 {
		ring.Put(s.At(pos), tracewrite.RawError(c.goroutine(), errID), ts)
		pos++
	}
	ring.Put(s.At(pos), c.exitWord(kind), ts)
}

// noteHeld records, after the event whose recording waited, that
// goroutine g waited for the writer from from to to: the time of the
// calls it was in, which readers leave out of them (tracefile.Event's
// Held). A wait for room for the note itself goes unnoted. Only under
// fullWait: under fullDrop nothing waits.
func (t *tracer) noteHeld(g uint64, from, to int64) {
	i, pos, _, _, ok := t.claimWait(g, 2, upto{})
	if !ok {
		return
	}
	s := &t.rings[i]
	ring.Put(s.At(pos), tracewrite.RawHeld(g, false), from)
	ring.Put(s.At(pos+1), tracewrite.RawHeld(g, true), to)
	procUnpin()
}

// wakeWaiters tells goroutines waiting for room that the writer has made
// some. The writer calls it after each pass over the rings.
func (t *tracer) wakeWaiters(all bool) {
	for i := range t.waitqs {
		q := &t.waitqs[i]
		if all || q.waiters.Load() > 0 {
			q.mu.Lock()
			q.cond.Broadcast()
			q.mu.Unlock()
		}
	}
}

// waiting reports whether any goroutine waits for room.
func (t *tracer) waiting() bool {
	for i := range t.waitqs {
		if t.waitqs[i].waiters.Load() > 0 {
			return true
		}
	}
	return false
}

// exit records the end of call c, on the goroutine that entered it.
func (t *tracer) exit(c Call) { t.exitErr(c, 0) }

// exitErr records the end of call c, which returned error errID of the
// error table, or none if it is 0: the error goes in the slot before the
// exit's, with the exit's time.
//
// It is nosplit, as enter is and for the same reason.
//
//go:nosplit
//go:noinline
func (t *tracer) exitErr(c Call, errID uint32) {
	panicking, ts, p := uintptr(1), int64(0), -1 // without g, ask the stack every time
	if gstate.Fast() {
		var ticks int64
		_, panicking, ticks, p = gstate.StateP()
		ts = clock.Units(ticks)
	} else {
		ts = clock.Nanotime()
	}
	kind := records.Return
	if panicking != 0 {
		kind = exitKind()
		p = -1 // the goroutine may have moved in exitKind
	}
	g := c.goroutine()
	if t.perP != 0 {
		n := uint64(1)
		if errID != 0 {
			n = 2
		}
		// claim, by hand for its common case, as in enter, and
		// putExit, which is no function to call here (see enter).
		done := false
		if uint(p) < uint(len(t.pRings)) {
			s := &t.pRings[p]
			if s.Owner() == g {
				if pos, ok := s.Take(n); ok {
					if errID != 0 {
						ring.Put(s.At(pos), tracewrite.RawError(g, errID), ts)
						pos++
					}
					ring.Put(s.At(pos), c.exitWord(kind), ts)
					done = true
				}
			}
		}
		if !done {
			t.exitClaim(c, errID, kind, ts)
		}
	} else {
		s := &t.rings[g&t.ringMask]
		if errID != 0 {
			// Only the exit's slot was promised: the error's is
			// taken if there is room, and counted if not.
			if pos, ok := s.Reserve(1, 0); ok {
				ring.Put(s.At(pos), tracewrite.RawError(g, errID), ts)
			} else {
				s.LostErrors.Add(1)
			}
		}
		ring.Put(s.ClaimOwed(), c.exitWord(kind), ts)
	}
	if c&(callMain|callRoot) != 0 {
		t.left(c, g, kind)
	}
}

// left acts on the end of a marked call: main.main on the main goroutine
// ends the trace, and a panic leaving a goroutine's outermost call ends
// the program, so the trace is written first.
//
//go:noinline
func (t *tracer) left(c Call, g uint64, kind records.ExitKind) {
	if c&callMain != 0 && g == 1 {
		t.mainReturned(kind)
		return
	}
	if c&callRoot != 0 && kind == records.Panic && t.fatal(c) {
		t.w.request("panic", false)
	}
}

// mainReturned ends the trace when main.main of the main goroutine is left:
// by returning (the program ends), or by a panic (it is about to die).
func (t *tracer) mainReturned(kind records.ExitKind) {
	switch kind {
	case records.Return:
		recording.Store(false)
		if f := pipedAtEnd(); f != nil {
			t.w.request(pipeEnd, true)
			dieOfPipe(f)
			return
		}
		t.w.request("main returned", true)
	case records.Panic:
		t.w.request("panic", false)
	case records.Goexit:
		t.w.request("", false) // the program goes on until a deadlock
	}
}

// fatal reports whether a panic leaving call c, its goroutine's first
// traced call, ends the program: whether only the runtime's frames and
// compiler-made wrappers, which recover nothing, lie below the call's
// outermost frame, or the testing package's tRunner, which recovers a
// test's panic only to report the test and panic again (but while
// fuzzing, when the trace then holds an end record the calls after it
// continue). It walks the whole stack, once per goroutine at most.
func (t *tracer) fatal(c Call) bool {
	stackWalks.Add(1)
	name := t.reg.name(uint32(c>>2) & fidMask)
	pcs := make([]uintptr, 64)
	for {
		n := runtime.Callers(1, pcs)
		if n < len(pcs) {
			pcs = pcs[:n]
			break
		}
		pcs = make([]uintptr, 2*len(pcs))
	}
	found, bare := false, false
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		switch {
		case f.Function == name:
			found, bare = true, true
		case strings.HasPrefix(f.Function, "runtime.") || strings.Contains(f.Function, ".gowrap") || f.Function == "testing.tRunner":
		default:
			bare = false
		}
		if !more {
			return found && bare
		}
	}
}

// Frames above a deferred exit, as exitKind sees them.
const (
	frameSkip   = iota // the runtime's exit path, or a compiler-made defer wrapper
	framePanic         // runtime.gopanic: a panic is unwinding the call
	frameGoexit        // runtime.Goexit
	frameOther         // anything else: the call returned normally
)

// exitKind tells whether a deferred exit runs because its function
// returned, panicked or called runtime.Goexit. The hot path calls it only
// while the goroutine has a panic or Goexit in progress, which may belong
// to an outer deferred call rather than to this exit. It looks at who
// called the deferred function, past the runtime's own frames: a few
// frame pointers followed and a cached answer per return address, so a
// panic through n traced frames costs O(n).
//
//go:noinline
func exitKind() records.ExitKind {
	if gstate.Hops() < 0 {
		return exitKindCallers()
	}
	for k := 0; k < 8; k++ {
		switch frameClass(gstate.Caller(uintptr(gstate.Hops() + k))) {
		case frameSkip:
			continue
		case framePanic:
			return records.Panic
		case frameGoexit:
			return records.Goexit
		}
		break
	}
	return records.Return
}

// frameClasses caches frameClass per return address: pc<<2 | class, in
// sets of two, the newest first. A panic's exits meet the same few
// addresses again and again (gopanic's call of deferred functions, each
// function's defer wrapper), in turn: with one entry per set, two of them
// sharing a set, as a change of the code's layout can make them, would
// miss every time.
var frameClasses [2 << 9]atomic.Uint64

// frameClass classifies the function holding return address pc.
func frameClass(pc uintptr) uint64 {
	if pc == 0 {
		return frameOther
	}
	// 512 sets, picked by the top 9 bits of a multiplicative hash.
	set := 2 * (uint64(pc) * 0x9e3779b97f4a7c15 >> (64 - 9))
	e0, e1 := &frameClasses[set], &frameClasses[set+1]
	if v := e0.Load(); uintptr(v>>2) == pc {
		return v & 3
	}
	if v := e1.Load(); uintptr(v>>2) == pc {
		return v & 3
	}
	c := classifyFrame(pc)
	e1.Store(e0.Load())
	e0.Store(uint64(pc)<<2 | c)
	return c
}

// stackWalks and frameLookups count the expensive steps of exits during a
// panic, for tests: whole stacks walked (once per goroutine at most) and
// return addresses looked up (once per address while the cache holds it).
var stackWalks, frameLookups atomic.Int64

// classifyFrame names the physical function holding pc: the outermost of
// the functions inlined there, the one whose frame the pointer walk met.
func classifyFrame(pc uintptr) uint64 {
	frameLookups.Add(1)
	frames := runtime.CallersFrames([]uintptr{pc})
	name := ""
	for {
		f, more := frames.Next()
		name = f.Function
		if !more {
			break
		}
	}
	return classifyName(name)
}

func classifyName(name string) uint64 {
	switch {
	case exitFrames[name] || strings.HasPrefix(name, selfPkg+"siteFor.func") || strings.Contains(name, ".deferwrap"):
		return frameSkip
	case name == "runtime.gopanic":
		return framePanic
	case name == "runtime.Goexit":
		return frameGoexit
	}
	return frameOther
}

// exitKindCallers is exitKind where frame pointers cannot be followed: it
// asks runtime.Callers for the frames above, at a cost of microseconds.
func exitKindCallers() records.ExitKind {
	var buf [32]uintptr
	pcs := buf[:runtime.Callers(3, buf[:])]
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		switch classifyName(f.Function) {
		case frameSkip:
			if more {
				continue
			}
		case framePanic:
			return records.Panic
		case frameGoexit:
			return records.Goexit
		}
		return records.Return
	}
}

// exitFrames are the frames of the runtime's own exit path, which
// exitKind looks past (with compiler-made defer wrappers and Trace's exit
// closures) to see who ran the deferred exit.
var exitFrames = map[string]bool{
	selfPkg + "(*tracer).exit":    true,
	selfPkg + "(*tracer).exitErr": true,
	selfPkg + "Exit":              true,
	selfPkg + "ExitErr":           true,
	selfPkg + "exitKind":          true,
	selfPkg + "exitFast":          true,
	selfPkg + "exitSlow":          true,
}

// selfPkg is this package's prefix in function names, read from the
// entry pc of one of its functions: a func value points at a word holding
// the code pointer.
var selfPkg = func() string {
	f := nop
	name := runtime.FuncForPC(**(**uintptr)(unsafe.Pointer(&f))).Name()
	return name[:strings.LastIndexByte(name, '.')+1]
}()
