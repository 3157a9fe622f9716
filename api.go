package calltrail

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/calltrail/calltrail/internal/gstate"
)

// Func describes a traced function to the fast path. Generated code
// declares one per function, statically initialised, and passes its
// address to Enter:
//
//	var _ctf = [...]calltrail.Func{{Name: "main.A1", File: "main.go", Line: 12}}
//
//	func A1() {
//		if calltrail.Enabled { if c := calltrail.Enter(&_ctf[0]); c != 0 { defer calltrail.Exit(c) } }
//		...
//	}
//
// Name is the function's name as Go's runtime gives it ("main.(*T).M",
// "main.main.func1"). The function gets its id the first time it is
// entered.
//
// For generated code: programs need not use it (see the package
// documentation).
type Func struct {
	Name string
	File string
	Line int

	id atomic.Uint32
}

// tr is the program's tracer, set once by init when tracing starts.
var tr *tracer

// recording is true while Enter records calls.
var recording atomic.Bool

// Enter records that the calling goroutine entered f, and returns the Call
// to pass to Exit when f is left. It returns the zero Call, on which Exit
// does nothing, when tracing is off or its buffers are full.
//
// For generated code: programs need not call it (see the package
// documentation).
func Enter(f *Func) Call {
	if !Enabled || !recording.Load() {
		return 0
	}
	return enterFast(f) // out of line, so that only the check is inlined
}

// Exit records the end of call c, whether its function returned, panicked
// or called runtime.Goexit. It must run on the goroutine that entered, as
// a deferred call does.
//
// For generated code: programs need not call it (see the package
// documentation).
func Exit(c Call) {
	if Enabled && c != 0 {
		exitFast(c)
	}
}

// ExitErr is Exit for a function whose last result is an error: err
// points at that result, read when the call ends, and the trace records
// the error with the call when it is not nil, by its dynamic type and its
// message (err.Error(), cut to MaxErrorMessage bytes). A call that
// returns nil costs what Exit does. calltrail build, run, test and
// instrument name the result if it has no name, and defer the call:
//
//	func Open(name string) (_ *File, __ctErr error) {
//		if calltrail.Enabled { if c := calltrail.Enter(&_ctf[0]); c != 0 { defer calltrail.ExitErr(c, &__ctErr) } }
//		...
//	}
//
// The message comes from the error's own Error method, which is the
// program's code: its time counts in the call's, but the calls it makes
// are not recorded, since the program did not make them.
//
// For generated code: programs need not call it (see the package
// documentation).
func ExitErr(c Call, err *error) {
	if Enabled && c != 0 {
		if *err == nil {
			exitFast(c)
			return
		}
		tr.exitErr(c, tr.errorID(c.goroutine(), *err))
	}
}

// Trace records entry into the function that calls it, and returns the
// function that records its exit:
//
//	func D() {
//		defer calltrail.Trace()()
//		...
//	}
//
// It finds its caller from the return address and caches the answer per
// call site, so only the first call of each site pays for the lookup.
//
//go:noinline
func Trace() func() {
	if !Enabled || !recording.Load() {
		return nop
	}
	var pc uintptr
	if gstate.Hops() >= 0 {
		pc = gstate.Caller(uintptr(gstate.Hops()))
	} else {
		var pcs [1]uintptr
		runtime.Callers(2, pcs[:])
		pc = pcs[0]
	}
	s := siteFor(pc)
	if s == nil {
		return nop
	}
	switch c := tr.enter(&s.fn); {
	case c == 0:
		return nop
	case c&callRoot != 0:
		return s.exitRoot
	}
	return s.exit
}

func nop() {}

// A site is a call site of Trace, with its function and its exit
// functions, made once so that Trace does not allocate: exitRoot ends a
// goroutine's first traced call (see callRoot).
type site struct {
	fn             Func
	exit, exitRoot func()
}

var sites sync.Map // return pc -> *site

func siteFor(pc uintptr) *site {
	if s, ok := sites.Load(pc); ok {
		return s.(*site)
	}
	f := runtime.FuncForPC(pc - 1)
	if f == nil {
		return nil
	}
	file, line := f.FileLine(f.Entry())
	id := tr.reg.enter(f.Name(), file, line)
	if id == 0 {
		return nil
	}
	if f.Name() == "main.main" {
		id |= idMain
	}
	s := &site{}
	s.fn.id.Store(id)
	s.exit = func() { tr.exit(newCall(gstate.Goid()&gMask, id)) }
	s.exitRoot = func() { tr.exit(newCall(gstate.Goid()&gMask, id) | callRoot) }
	actual, _ := sites.LoadOrStore(pc, s)
	return actual.(*site)
}

// Pause stops recording new calls; calls already entered still record
// their exits. Resume starts recording again. Both are cheap, and safe to
// call from any goroutine.
func Pause() { recording.Store(false) }

// Resume starts recording again after Pause. It does nothing if tracing
// never started (CALLTRAIL=off, or built without the calltrail tag) or
// has been stopped. Recording switched on during a capture stays on when
// the capture ends.
func Resume() {
	captures.keepOn()
	resume()
}

func resume() {
	if Enabled && tr != nil && !tr.w.closed() {
		recording.Store(true)
	}
}

// Flush writes everything recorded so far to the trace file and returns
// when it is written.
func Flush() {
	if Enabled && tr != nil {
		tr.w.request("", false)
	}
}

// Stop ends tracing: it writes everything recorded so far, ends and
// closes the trace file. Tracing stops by itself when main.main returns;
// call Stop before os.Exit, which Go gives no way to notice.
func Stop() {
	if Enabled && tr != nil {
		recording.Store(false)
		tr.w.request("stopped", true)
	}
}
