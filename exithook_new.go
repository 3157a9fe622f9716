//go:build calltrail && calltrail_exithook && go1.23

package calltrail

import _ "unsafe" // for go:linkname

// exitHook is the runtime's own hook record.
type exitHook struct {
	F            func()
	RunOnFailure bool
}

// addExitHook registers a function the runtime runs on os.Exit. Linking
// to it needs -ldflags=-checklinkname=0, which calltrail build, run and
// test pass together with the calltrail_exithook tag; plain builds with
// the calltrail tag do without, and lose what os.Exit cuts short.
//
//go:linkname addExitHook internal/runtime/exithook.Add
func addExitHook(h exitHook)

func init() {
	addExitHook(exitHook{F: stopAtExit, RunOnFailure: true})
}
