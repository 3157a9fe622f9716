//go:build !race && !msan && !asan

package gstate

// raceEnabled reports a build with the race detector or a sanitizer (see
// race.go).
const raceEnabled = false
