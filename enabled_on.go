//go:build calltrail

package calltrail

// Enabled reports whether the program was built with the calltrail build
// tag. Guards test it as a constant, so that without the tag they compile
// to nothing at all.
const Enabled = true
