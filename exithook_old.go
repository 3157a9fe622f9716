//go:build calltrail && calltrail_exithook && !go1.23

package calltrail

import _ "unsafe" // for go:linkname

// addExitHook registers a function the runtime runs on os.Exit (see
// exithook_new.go).
//
//go:linkname addExitHook runtime.addExitHook
func addExitHook(f func(), runOnNonZeroExit bool)

func init() {
	addExitHook(stopAtExit, true)
}
