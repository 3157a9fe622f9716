// Package profhook is how package profiles hands calltrail's runtime the
// Go runtime's profiles. The runtime does not import runtime/pprof itself:
// a traced build would compile it, and compress/flate under it, before
// the runtime and so before every instrumented package; through this
// package it is linked by the program's main package, or its tests, when
// the program records profiles, and compiles beside them.
package profhook

import (
	"io"
	"sync"
)

// Default lists the profiles ("cpu,mutex,block") the program records
// unless CALLTRAIL_PROFILES says otherwise: calltrail build --profiles
// sets it, with the linker's -X flag, as it links package profiles.
var Default string

// A Profiler is runtime/pprof, as package profiles registers it.
type Profiler interface {
	StartCPUProfile(w io.Writer) error
	StopCPUProfile()
	// WriteProfile writes the named profile ("mutex", "block") as
	// runtime/pprof's Profile.WriteTo does with debug 0.
	WriteProfile(name string, w io.Writer) error
}

var (
	mu      sync.Mutex
	linked  Profiler
	waiting []func(Profiler)
)

// Register makes p the program's profiler, and calls what waited for one.
// Package profiles calls it as it is initialised: after the runtime's
// own initialisation, which may already have started tracing.
func Register(p Profiler) {
	mu.Lock()
	linked = p
	w := waiting
	waiting = nil
	mu.Unlock()
	for _, f := range w {
		f(p)
	}
}

// Get returns the program's profiler, nil if package profiles is not
// linked (or not yet initialised).
func Get() Profiler {
	mu.Lock()
	defer mu.Unlock()
	return linked
}

// When calls f with the program's profiler: at once if it has one, else
// once package profiles registers it, if ever.
func When(f func(Profiler)) {
	mu.Lock()
	p := linked
	if p == nil {
		waiting = append(waiting, f)
	}
	mu.Unlock()
	if p != nil {
		f(p)
	}
}
