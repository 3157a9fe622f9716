package gstate

import (
	"runtime/debug"
	_ "unsafe" // for go:linkname
)

// procPin and procUnpin keep the calling goroutine on its P and return
// the P's id: the runtime exports them for packages such as sync.Pool.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// pOff is the offset of m.p in the runtime's m, 0 while unknown. The m is
// at mOff in g: after the stack bounds, stackguard0/1, _panic and _defer
// in every Go release since go1.4, as panicOff is.
var pOff uintptr

const mOff = 48

// StateP is State with the id of the P the goroutine runs on, or -1 where
// that is not known. Only when Fast.
//
// The id is the goroutine's P only while the goroutine cannot be
// preempted, and so cannot move to another P: a caller that relies on it
// is //go:nosplit, whose code is no safe point for the runtime's
// asynchronous preemption, and calls nothing but nosplit functions (and
// inlined ones, which become its own code) until it is done with the P.
//
//go:nosplit
func StateP() (goid uint64, panicking uintptr, ticks int64, p int) {
	goid, panicking, ticks, p64 := readP()
	return goid, panicking, ticks, int(p64)
}

// probeP finds m.p. In m, p follows curg, the goroutine it runs, and
// caughtsig, one word (go1.25 and before) or two (go1.26) after it:
// probeP finds curg by the current goroutine's g, and takes the candidate
// that points at a P with the id runtime.procPin gives and a link back to
// the m. It leaves pOff 0 when none does, and under the race detector
// (see raceEnabled).
func probeP() {
	if !Have || raceEnabled {
		return
	}
	// The words of m are read pinned, so that they are the goroutine's
	// m's and P's; the candidates are followed unpinned (isP), because
	// one that is no pointer faults, and a panic with the P pinned is
	// fatal.
	pid := procPin()
	g := gptr()
	m := uintptr(at(g + mOff))
	// Where the g is: m.curg, and on some platforms m.tls[0] before it.
	type cand struct{ off, p uintptr }
	var cands [8]cand
	n := 0
	for off := uintptr(8); m != 0 && m&7 == 0 && off < mScanLimit && n < len(cands); off += 8 {
		if uintptr(at(m+off)) == g {
			cands[n] = cand{off + 16, uintptr(at(m + off + 16))}
			cands[n+1] = cand{off + 24, uintptr(at(m + off + 24))}
			n += 2
		}
	}
	procUnpin()
	for _, c := range cands[:n] {
		if isP(c.p, m, pid) {
			pOff = c.off
			return
		}
	}
}

// isP reports whether p points at the P with id pid, linked to m. A p
// that is no pointer faults as it is read: a panic that isP recovers
// from, reporting false.
func isP(p, m uintptr, pid int) (ok bool) {
	if p < 1<<16 || p&7 != 0 {
		return false
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if int32(at(p)) != int32(pid) {
		return false
	}
	for back := uintptr(8); back < 128; back += 8 {
		if uintptr(at(p+back)) == m {
			return true
		}
	}
	return false
}

// mScanLimit bounds the offsets probeP tries for m.curg: it is at 184 in
// go1.26 on linux/amd64, after the signal stack, mask and TLS words.
const mScanLimit = 1024

// P returns the address of the P the goroutine runs on, 0 where StateP
// gives no P. Like StateP's id, it is the goroutine's P only while the
// goroutine cannot move: pinned, or in nosplit code.
func P() uintptr {
	if pOff == 0 {
		return 0
	}
	return uintptr(at(uintptr(at(gptr()+mOff)) + pOff))
}
