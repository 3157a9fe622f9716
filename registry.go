package calltrail

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/calltrail/calltrail/internal/records"
)

// registry assigns function ids. It is used off the hot path only: once
// per function, and by the writer to name goroutine creators.
type registry struct {
	mu      sync.Mutex
	ids     map[string]uint32
	funcs   []records.Func // index is id; funcs[0] is unused
	written int            // funcs[1:written] are in the file; writer only

	// entered marks the ids looked up to record a call, not only to
	// name a goroutine's creator; nEntered counts them. A function is
	// looked up before its first call is recorded, so the writer, once
	// it has seen the calls of nEntered functions, knows that it has
	// seen every function a call it reads can be of (see
	// tracewrite.Totals.Entered).
	entered  []bool
	nEntered atomic.Uint64
}

func (r *registry) init() {
	r.ids = make(map[string]uint32)
	r.funcs = []records.Func{{}}
	r.entered = []bool{false}
	r.written = 1
}

// enter returns the id of the named function, about to be called, as id
// does, marking it entered.
func (r *registry) enter(name, file string, line int) uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.idLocked(name, file, line)
	if id != 0 && !r.entered[id] {
		r.entered[id] = true
		r.nEntered.Add(1)
	}
	return id
}

// id returns the id of the named function, adding it if needed. It returns
// 0 when no more ids are left.
func (r *registry) id(name, file string, line int) uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.idLocked(name, file, line)
}

func (r *registry) idLocked(name, file string, line int) uint32 {
	if id, ok := r.ids[name]; ok {
		return id
	}
	if len(r.funcs) > maxFid {
		return 0 // out of ids: its calls count as dropped
	}
	id := uint32(len(r.funcs))
	r.funcs = append(r.funcs, records.Func{Name: name, File: file, Line: line})
	r.entered = append(r.entered, false)
	r.ids[name] = id
	return id
}

// forPC returns the id of the function holding pc.
func (r *registry) forPC(pc uintptr) uint32 {
	f := runtime.FuncForPC(pc)
	if f == nil {
		return 0
	}
	file, line := f.FileLine(f.Entry())
	return r.id(f.Name(), file, line)
}

// unwritten returns the functions registered since the last call, and the
// id of the first.
func (r *registry) unwritten() (uint32, []records.Func) {
	r.mu.Lock()
	defer r.mu.Unlock()
	first := r.written
	fs := append([]records.Func(nil), r.funcs[first:]...)
	r.written = len(r.funcs)
	return uint32(first), fs
}

// all returns every function registered, from id 1.
func (r *registry) all() []records.Func {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]records.Func(nil), r.funcs[1:]...)
}

func (r *registry) name(id uint32) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if int(id) < len(r.funcs) {
		return r.funcs[id].Name
	}
	return "?"
}
