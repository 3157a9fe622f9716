package clock

import _ "unsafe" // for go:linkname

// Nanotime is the runtime's monotonic clock, the time source when no safe
// cycle counter is available. The runtime keeps it open to linkname.
//
//go:linkname Nanotime runtime.nanotime
func Nanotime() int64
