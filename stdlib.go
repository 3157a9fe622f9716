//go:build calltrail

package calltrail

import _ "unsafe" // for go:linkname

// The packages of the standard library that a build traces (--pkgs
// encoding/json) cannot import calltrail: they import a package the build
// adds to the standard library, internal/calltrailstd, whose functions
// have no body and are these, linked by name. Its Func has the layout of
// Func.

//go:linkname stdEnter internal/calltrailstd.Enter
func stdEnter(f *Func) Call { return Enter(f) }

//go:linkname stdExit internal/calltrailstd.Exit
func stdExit(c Call) { Exit(c) }

//go:linkname stdExitErr internal/calltrailstd.ExitErr
func stdExitErr(c Call, err *error) { ExitErr(c, err) }

//go:linkname stdCoverage internal/calltrailstd.Coverage
func stdCoverage(payload string) bool { return Coverage(payload) }
