package calltrail

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/calltrail/calltrail/internal/clock"
	"github.com/calltrail/calltrail/internal/gstate"
	"github.com/calltrail/calltrail/internal/ring"
	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

// A tracer owns the rings of one trace and the writer that empties them.
// A program has one, started by init when built with the calltrail tag;
// tests make their own.
type tracer struct {
	rings    []ring.Ring
	ringMask uint64
	waitqs   []waitq         // per shard: goroutines waiting for room
	policy   fullPolicy      // what a goroutine does when its ring is full
	seen     []atomic.Uint64 // goroutines whose creation record is in a ring
	seenMask uint64
	reg      registry
	errs     errorTable
	spans    spanTable
	w        *writer

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
		return gstate.StackGoid() & gMask, clock.Nanotime()
	}
	g, _, ticks := gstate.State()
	return g & gMask, clock.Units(ticks)
}

// enter records the calling goroutine's entry into f, giving f its id the
// first time.
func (t *tracer) enter(f *Func) Call {
	id := f.id.Load()
	if id == 0 {
		if id = t.register(f); id == 0 {
			// No id left for f: its calls are lost, and counted so.
			t.rings[0].Dropped.Add(1)
			return 0
		}
	}
	g, ts := stamp()
	i := g & t.ringMask
	if t.seen[g&t.seenMask].Load() != g {
		return t.enterFirst(i, g, id, ts)
	}
	// take, by hand: a call of it costs a tenth of the floor (see
	// BenchmarkHotPathVsFloor), and this is the hot path.
	s := &t.rings[i]
	var pos uint64
	if t.policy == fullWait {
		var full bool
		if pos, full = s.Claim(1); full {
			if !t.waitFree(i, pos, 1) {
				return 0
			}
			from := ts
			_, ts = stamp() // the wait was the caller's time, not this call's
			c := newCall(g, id)
			ring.Put(s.At(pos), c.word(), ts)
			t.noteHeld(i, g, from, ts)
			return c
		}
	} else {
		var ok bool
		if pos, ok = s.Reserve(1, 1); !ok {
			s.Dropped.Add(1)
			return 0
		}
	}
	c := newCall(g, id)
	ring.Put(s.At(pos), c.word(), ts)
	return c
}

// take claims n slots of shard i for a call entered at ts, as the policy
// says: under fullWait it waits while the ring is full, and returns the
// time after the wait, which was the caller's, not the call's; under
// fullDrop it refuses, counting the call as dropped. It reports whether
// the call is to be recorded.
func (t *tracer) take(i, n uint64, ts int64) (uint64, int64, bool) {
	s := &t.rings[i]
	if t.policy == fullWait {
		pos, full := s.Claim(n)
		if full {
			if !t.waitFree(i, pos, n) {
				return 0, 0, false
			}
			_, ts = stamp()
		}
		return pos, ts, true
	}
	pos, ok := s.Reserve(n, 1)
	if !ok {
		s.Dropped.Add(1)
	}
	return pos, ts, ok
}

// enterFirst records a goroutine's first traced call, after the record of
// the goroutine itself: its parent, and where it was created and started.
// The call is marked callRoot.
//
//go:noinline
func (t *tracer) enterFirst(i, g uint64, id uint32, ts int64) Call {
	if t.seen[g&t.seenMask].Load() == g|quiet {
		return 0 // calltrail itself is calling an error's Error method
	}
	s := &t.rings[i]
	pos, ts, ok := t.take(i, 4, ts)
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

// exitHeld writes, in the slots of c's shard at pos that waitFree made
// room for, the exit at ts of call c, with error errID if any, and the
// wait for the writer after it.
//
//go:noinline
func (t *tracer) exitHeld(c Call, pos uint64, errID uint32, kind tracefile.ExitKind, ts int64) {
	g := c.goroutine()
	i := g & t.ringMask
	s := &t.rings[i]
	if errID != 0 {
		ring.Put(s.At(pos), tracewrite.RawError(g, errID), ts)
		pos++
	}
	ring.Put(s.At(pos), c.exitWord(kind), ts)
	_, now := stamp()
	t.noteHeld(i, g, ts, now)
	if c&(callMain|callRoot) != 0 {
		t.left(c, g, kind)
	}
}

// noteHeld records, after the event whose recording waited, that
// goroutine g waited for the writer from from to to: the time of the
// calls it was in, which readers leave out of them (tracefile.Event's
// Held). A wait for room for the note itself goes unnoted.
func (t *tracer) noteHeld(i, g uint64, from, to int64) {
	s := &t.rings[i]
	pos, full := s.Claim(2)
	if full && !t.waitFree(i, pos, 2) {
		return
	}
	ring.Put(s.At(pos), tracewrite.RawHeld(g, false), from)
	ring.Put(s.At(pos+1), tracewrite.RawHeld(g, true), to)
}

// waitFree blocks until the n slots claimed at pos in shard i are free,
// while the writer makes room: the program slows down rather than lose
// the call. It counts the wait and its time. It gives up, reporting false,
// only when the trace is closing; the slots then stay unwritten, which
// matters to no one, since nothing more is read.
//
//go:noinline
func (t *tracer) waitFree(i, pos, n uint64) bool {
	s, q := &t.rings[i], &t.waitqs[i]
	start := clock.Nanotime()
	q.mu.Lock()
	q.waiters.Add(1)
	ok := false
	for {
		if ok = s.Free(pos, n); ok || t.stopping.Load() {
			break
		}
		t.w.wake()
		q.cond.Wait()
	}
	q.waiters.Add(-1)
	q.mu.Unlock()
	s.Waits.Add(1)
	s.Held.Add(uint64(clock.Nanotime() - start))
	return ok
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
func (t *tracer) exitErr(c Call, errID uint32) {
	panicking, ts := uintptr(1), int64(0) // without g, ask the stack every time
	if gstate.Fast() {
		_, panicking, ts = gstate.State()
		ts = clock.Units(ts)
	} else {
		ts = clock.Nanotime()
	}
	kind := tracefile.Return
	if panicking != 0 {
		kind = exitKind()
	}
	g := c.goroutine()
	i := g & t.ringMask
	s := &t.rings[i]
	var sl *ring.Slot
	if t.policy == fullWait {
		n := uint64(1)
		if errID != 0 {
			n = 2
		}
		pos, full := s.Claim(n)
		// The call ended at ts; a wait is its caller's time.
		if full {
			if !t.waitFree(i, pos, n) {
				return // the trace is closing: the call reads as unfinished
			}
			t.exitHeld(c, pos, errID, kind, ts)
			return
		}
		if errID != 0 {
			ring.Put(s.At(pos), tracewrite.RawError(g, errID), ts)
			pos++
		}
		sl = s.At(pos)
	} else {
		if errID != 0 {
			// Only the exit's slot was promised: the error's is
			// taken if there is room, and counted if not.
			if pos, ok := s.Reserve(1, 0); ok {
				ring.Put(s.At(pos), tracewrite.RawError(g, errID), ts)
			} else {
				s.LostErrors.Add(1)
			}
		}
		sl = s.ClaimOwed()
	}
	ring.Put(sl, c.exitWord(kind), ts)
	if c&(callMain|callRoot) != 0 {
		t.left(c, g, kind)
	}
}

// left acts on the end of a marked call: main.main on the main goroutine
// ends the trace, and a panic leaving a goroutine's outermost call ends
// the program, so the trace is written first.
//
//go:noinline
func (t *tracer) left(c Call, g uint64, kind tracefile.ExitKind) {
	if c&callMain != 0 && g == 1 {
		t.mainReturned(kind)
		return
	}
	if c&callRoot != 0 && kind == tracefile.Panic && t.fatal(c) {
		t.w.request("panic", false)
	}
}

// mainReturned ends the trace when main.main of the main goroutine is left:
// by returning (the program ends), or by a panic (it is about to die).
func (t *tracer) mainReturned(kind tracefile.ExitKind) {
	switch kind {
	case tracefile.Return:
		recording.Store(false)
		if f := pipedAtEnd(); f != nil {
			t.w.request(pipeEnd, true)
			dieOfPipe(f)
			return
		}
		t.w.request("main returned", true)
	case tracefile.Panic:
		t.w.request("panic", false)
	case tracefile.Goexit:
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
func exitKind() tracefile.ExitKind {
	if gstate.Hops() < 0 {
		return exitKindCallers()
	}
	for k := 0; k < 8; k++ {
		switch frameClass(gstate.Caller(uintptr(gstate.Hops() + k))) {
		case frameSkip:
			continue
		case framePanic:
			return tracefile.Panic
		case frameGoexit:
			return tracefile.Goexit
		}
		break
	}
	return tracefile.Return
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
func exitKindCallers() tracefile.ExitKind {
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
			return tracefile.Panic
		case frameGoexit:
			return tracefile.Goexit
		}
		return tracefile.Return
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
}

// selfPkg is this package's prefix in function names, read from the
// entry pc of one of its functions: a func value points at a word holding
// the code pointer.
var selfPkg = func() string {
	f := nop
	name := runtime.FuncForPC(**(**uintptr)(unsafe.Pointer(&f))).Name()
	return name[:strings.LastIndexByte(name, '.')+1]
}()
