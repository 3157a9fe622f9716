package calltrail

import _ "unsafe" // for go:linkname

// nanotime is the runtime's monotonic clock, the time source when no safe
// cycle counter is available. The runtime keeps it open to linkname.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64
