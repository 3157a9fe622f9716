//go:build race || msan || asan

package gstate

// raceEnabled: under the race detector and the memory and address
// sanitizers, sync/atomic's functions are calls, not instructions, and a
// goroutine may be preempted at any of them, moving to another P between
// reading its P and storing to that P's ring. StateP then gives no P,
// and callers take their pinned path.
const raceEnabled = true
