package calltrail

import "sync"

// coverage holds what calltrail's build instrumented of each package, as
// the packages registered it (see Coverage): chunks for the trace, each
// written once to a trace file and whole into every snapshot.
var coverage struct {
	mu       sync.Mutex
	payloads [][]byte
	written  int // payloads[:written] are in the trace file; writer only
}

// Coverage records what calltrail's build instrumented of a package, and
// what it left out and why. Generated code calls it once per package,
// from a package-level variable's initialiser, with the payload of a
// coverage chunk encoded at build time (see tracewrite.AppendCoverage);
// the trace carries it as it is. It returns true, so that the call can
// initialise a variable.
//
// For generated code: programs need not call it (see the package
// documentation).
func Coverage(payload string) bool {
	coverage.mu.Lock()
	defer coverage.mu.Unlock()
	coverage.payloads = append(coverage.payloads, []byte(payload))
	return true
}

// unwrittenCoverage returns the payloads registered since its last call.
func unwrittenCoverage() [][]byte {
	coverage.mu.Lock()
	defer coverage.mu.Unlock()
	ps := coverage.payloads[coverage.written:]
	coverage.written = len(coverage.payloads)
	return ps
}

// allCoverage returns every payload registered.
func allCoverage() [][]byte {
	coverage.mu.Lock()
	defer coverage.mu.Unlock()
	return coverage.payloads[:len(coverage.payloads):len(coverage.payloads)]
}
