package calltrail

import (
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"
)

// A tracer owns the rings of one trace and the writer that empties them.
// A program has one, started by init when built with the calltrail tag;
// tests make their own.
type tracer struct {
	shards    []shard
	shardMask uint64
	seen      []atomic.Uint64 // goroutines whose creation record is in a ring
	seenMask  uint64
	reg       registry
	w         *writer
}

// enter records the calling goroutine's entry into f, giving f its id the
// first time.
func (t *tracer) enter(f *Func) Call {
	id := f.id.Load()
	if id == 0 {
		if id = t.register(f); id == 0 {
			// No id left for f: its calls are lost, and counted so.
			t.shards[0].dropped.Add(1)
			return 0
		}
	}
	var g uint64
	var ts int64
	if fastG {
		g, _, ts = gstate(goidOff)
		if useCounter {
			ts >>= tickShift
		} else {
			ts = nanotime()
		}
	} else {
		g, ts = stackGoid(), nanotime()
	}
	g &= 1<<gBits - 1
	s := &t.shards[g&t.shardMask]
	if parentOff != 0 && t.seen[g&t.seenMask].Load() != g {
		t.noteGoroutine(s, g, ts)
	}
	pos, ok := s.reserve(1, 1)
	if !ok {
		s.dropped.Add(1)
		return 0
	}
	c := Call(g<<fidBits | uint64(id))
	s.slots[pos&s.mask].put(uint64(c)<<3|kEnter, ts)
	return c
}

func (t *tracer) register(f *Func) uint32 {
	id := t.reg.id(f.Name, f.File, f.Line)
	f.id.Store(id)
	return id
}

// noteGoroutine writes the record of a goroutine's parent and creator
// before its first event. It is skipped, to be retried on a later call,
// when the ring is full.
func (t *tracer) noteGoroutine(s *shard, g uint64, ts int64) {
	pos, ok := s.reserve(3, 0)
	if !ok {
		return
	}
	t.seen[g&t.seenMask].Store(g)
	parent, gopc, startpc := gInfo()
	b, c := &s.slots[(pos+1)&s.mask], &s.slots[(pos+2)&s.mask]
	b.w0, b.w1 = parent, int64(gopc)
	c.w0, c.w1 = 0, int64(startpc)
	s.slots[pos&s.mask].put((g<<fidBits)<<3|kGoroutine, ts)
}

// exit records the end of call c, on the goroutine that entered it.
func (t *tracer) exit(c Call) {
	var panicking uintptr
	var ts int64
	if fastG {
		_, panicking, ts = gstate(goidOff)
		if useCounter {
			ts >>= tickShift
		} else {
			ts = nanotime()
		}
	} else {
		panicking, ts = 1, nanotime() // without g, ask the stack every time
	}
	kind := uint64(kExit)
	fatal := false
	id := uint32(c) & fidMask
	if panicking != 0 {
		kind, fatal = exitKind(t.reg.mainID.Load() == id, func() string { return t.reg.name(id) })
	}
	g := uint64(c) >> fidBits
	t.shards[g&t.shardMask].claimOwed().put(uint64(c)<<3|kind, ts)
	if id == t.reg.mainID.Load() && g == 1 {
		t.mainReturned(kind)
	} else if fatal {
		t.w.request("panic", false)
	}
}

// mainReturned ends the trace when main.main of the main goroutine is left:
// by returning (the program ends), or by a panic (it is about to die).
func (t *tracer) mainReturned(kind uint64) {
	switch kind {
	case kExit:
		recording.Store(false)
		t.w.request("main returned", true)
	case kPanic:
		t.w.request("panic", false)
	case kGoexit:
		t.w.request("", false) // the program goes on until a deadlock
	}
}

// exitKind tells, from the stack, whether a deferred exit runs because its
// function returned, panicked or called runtime.Goexit. The hot path calls
// it only while the goroutine has a panic or Goexit in progress, which may
// belong to an outer deferred call rather than to this exit. fatal reports
// a panic leaving the goroutine's outermost function, which kills the
// program; name is asked for only then.
func exitKind(isMain bool, name func() string) (kind uint64, fatal bool) {
	var buf [32]uintptr
	pcs := buf[:runtime.Callers(3, buf[:])]
	frames := runtime.CallersFrames(pcs)
	kind = kExit
	for {
		f, more := frames.Next()
		if exitFrames[f.Function] || strings.Contains(f.Function, ".deferwrap") {
			if more {
				continue
			}
			break
		}
		switch f.Function {
		case "runtime.gopanic":
			kind = kPanic
		case "runtime.Goexit":
			kind = kGoexit
		}
		break
	}
	if kind != kPanic || isMain {
		return kind, isMain && kind == kPanic
	}
	return kind, rootFunc() == name()
}

// exitFrames are the frames of the runtime's own exit path, which
// exitKind looks past (with compiler-made defer wrappers) to see who ran
// the deferred exit.
var exitFrames = map[string]bool{
	selfPkg + "(*tracer).exit": true,
	selfPkg + "Exit":           true,
	selfPkg + "siteFor.func1":  true,
}

// rootFunc returns the outermost function of the calling goroutine.
func rootFunc() string {
	pcs := make([]uintptr, 64)
	for {
		n := runtime.Callers(1, pcs)
		if n < len(pcs) {
			pcs = pcs[:n]
			break
		}
		pcs = make([]uintptr, 2*len(pcs))
	}
	root := ""
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if f.Function != "runtime.goexit" && f.Function != "runtime.main" {
			root = f.Function
		}
		if !more {
			return root
		}
	}
}

// selfPkg is this package's prefix in function names, read from the
// entry pc of one of its functions: a func value points at a word holding
// the code pointer.
var selfPkg = func() string {
	f := stackGoid
	name := funcName(**(**uintptr)(unsafe.Pointer(&f)))
	return name[:strings.LastIndexByte(name, '.')+1]
}()
