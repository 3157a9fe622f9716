package gstate

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// The hot path reads the goroutine id straight from the runtime's g, at an
// offset that changes between Go releases. probeG finds the offsets at
// start-up and checks them against what runtime.Stack prints, and checks
// that g._panic is where the assembly reads it; when that fails (an
// unknown release or architecture) calltrail falls back to parsing
// runtime.Stack, which is slow but always right.
var (
	fast bool // goidOff and panicOff are verified; State may be used
	//lint:ignore U1000 the assembly (readP) reads it
	goidOff   uintptr // offset of g.goid
	parentOff uintptr // offset of g.parentGoid, 0 if unknown
	gopcOff   uintptr // offset of g.gopc, 0 if unknown
	startOff  uintptr // offset of g.startpc, 0 if unknown
	hops      = -1    // frame pointer hops for Trace's caller, -1 if unknown
)

// panicOff is the offset of g._panic, which the assembly reads: the second
// word after the stack bounds and stackguard0/1 in every Go release since
// go1.4.
const panicOff = 32

var probeOnce sync.Once

// Probe finds and checks the offsets in the runtime's g that the hot path
// reads, and how to find Trace's caller from frame pointers. It runs once
// per process; the fallbacks serve until it has. withP says whether the
// caller's hot path was compiled to keep to the P StateP gives (see
// StateP); without it, StateP gives none.
func Probe(withP bool) {
	probeOnce.Do(func() {
		probeG()
		if fast && withP {
			probeP()
		}
		probeHops()
	})
}

// Fast reports whether State may be used: the offsets it reads are
// verified.
func Fast() bool { return fast }

// Offsets returns the offsets in the runtime's g of the goroutine id and,
// in the m, of the P (see StateP), for code that reads them itself, such
// as calltrail's assembly hot path; both 0 where StateP gives no P.
func Offsets() (goid, p uintptr) {
	if !fast || pOff == 0 {
		return 0, 0
	}
	return goidOff, pOff
}

// PanicOffset and MOffset are the offsets in the runtime's g of _panic and
// of m, the same in every Go release calltrail knows.
const (
	PanicOffset = panicOff
	MOffset     = mOff
)

// State returns the calling goroutine's id, whether a panic or Goexit is
// unwinding it (non-zero g._panic), and the cycle counter, in one call.
// Only when Fast.
func State() (goid uint64, panicking uintptr, ticks int64) {
	goid, panicking, ticks, _ = readP()
	return goid, panicking, ticks
}

// word reads the word at offset off of the current goroutine's g. Used
// only at start-up, to find and check offsets.
func word(off uintptr) uint64 { return at(gptr() + off) }

// HasParents reports whether Info can tell a goroutine's creator.
func HasParents() bool { return parentOff != 0 }

// Hops is the number of frame pointers Caller follows from a function
// shaped like Trace to its caller's return address, -1 if unknown.
func Hops() int { return hops }

// Fallback makes this package act as where its offsets are unknown, for
// tests of the slow paths, until the returned function restores it.
func Fallback() (restore func()) {
	f, p, h, po := fast, parentOff, hops, pOff
	fast, parentOff, hops, pOff = false, 0, -1, 0
	return func() { fast, parentOff, hops, pOff = f, p, h, po }
}

// scanLimit bounds the offsets probeG tries: the g struct is a little over
// 400 bytes in the releases calltrail knows.
const scanLimit = 512

// knownGoidOffset gives the offset of g.goid on 64-bit platforms for the
// releases calltrail was tested with; it is only the first guess.
func knownGoidOffset(version string) uintptr {
	minor := goMinor(version)
	switch {
	case minor >= 23 && minor <= 24:
		return 160
	case minor >= 9:
		return 152
	}
	return 0
}

// goMinor returns 22 for "go1.22.3", and 0 for anything unexpected.
func goMinor(v string) int {
	v, ok := strings.CutPrefix(v, "go1.")
	if !ok {
		return 0
	}
	if i := strings.IndexAny(v, ".-rb "); i >= 0 {
		v = v[:i]
	}
	n, _ := strconv.Atoi(v)
	return n
}

// StackGoid parses the id of the calling goroutine out of runtime.Stack:
// "goroutine 18 [running]:", slowly, everywhere. Buffers are pooled:
// runtime.Stack keeps its argument reachable, so a local buffer would
// escape on every call.
func StackGoid() uint64 {
	bp := stackBufs.Get().(*[64]byte)
	b := bp[:runtime.Stack(bp[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	stackBufs.Put(bp)
	return id
}

var stackBufs = sync.Pool{New: func() any { return new([64]byte) }}

// probe holds what one goroutine saw of itself.
type probe struct {
	goid  uint64 // from runtime.Stack
	words [scanLimit / 8]uint64
	self  uintptr // a pc inside the probing function
}

func (p *probe) fill() {
	p.goid = StackGoid()
	for i := range p.words {
		p.words[i] = word(uintptr(i * 8))
	}
	var pcs [1]uintptr
	runtime.Callers(2, pcs[:])
	p.self = pcs[0]
}

// probeOut and probeDone pass results from probeChild, which takes no
// arguments so that the goroutine starts at probeChild itself rather than
// at a wrapper the compiler makes for a go statement with arguments.
var (
	probeOut  *probe
	probeDone chan struct{}
)

//go:noinline
func probeChild() {
	probeOut.fill()
	close(probeDone)
}

// probeParent starts a goroutine from a known function, so that the
// child's parent id and creation pc can be checked.
//
//go:noinline
func probeParent(self, child *probe) {
	self.fill()
	probeOut, probeDone = child, make(chan struct{})
	go probeChild()
	<-probeDone
}

// probeG sets fast, goidOff and the optional offsets.
func probeG() {
	if !Have {
		return
	}
	var main, a, b, c probe
	main.fill()
	done := make(chan struct{})
	go func() {
		probeParent(&a, &b) // a runs in a fresh goroutine, b is its child
		close(done)
	}()
	<-done
	done = make(chan struct{})
	go func() {
		probeParent(&c, new(probe))
		close(done)
	}()
	<-done

	all := []*probe{&main, &a, &b, &c}
	matches := func(off uintptr) bool {
		for _, p := range all {
			if p.goid == 0 || p.words[off/8] != p.goid {
				return false
			}
		}
		return true
	}
	for _, p := range all {
		if p.words[panicOff/8] != 0 {
			return // not panicking, yet something at _panic's offset
		}
	}
	if !panicSeen() {
		return
	}
	off := knownGoidOffset(runtime.Version())
	if off == 0 || off >= scanLimit || !matches(off) {
		off = 0
		for o := uintptr(8); o < scanLimit; o += 8 {
			if matches(o) {
				off = o
				break
			}
		}
	}
	if off == 0 {
		return
	}
	goidOff, fast = off, true

	// b was started by a: look after goid for a's id, then the pc of the
	// go statement in probeParent, then the entry of probeChild.
	parentName := funcName(a.self)
	childEntry := funcEntry(b.self)
	for o := off + 8; o+16 < scanLimit; o += 8 {
		if b.words[o/8] != a.goid || funcName(uintptr(b.words[o/8+1])) != parentName {
			continue
		}
		for s := o + 16; s < o+64 && s < scanLimit; s += 8 {
			if uintptr(b.words[s/8]) == childEntry && childEntry != 0 {
				parentOff, gopcOff, startOff = o, o+8, s
				return
			}
		}
	}
}

func funcName(pc uintptr) string {
	if f := runtime.FuncForPC(pc); f != nil {
		return f.Name()
	}
	return ""
}

func funcEntry(pc uintptr) uintptr {
	if f := runtime.FuncForPC(pc); f != nil {
		return f.Entry()
	}
	return 0
}

// panicSeen reports whether the word at panicOff is set while a panic,
// and while runtime.Goexit, unwinds a goroutine: the hot path's test of
// whether an exit may be other than a return.
func panicSeen() bool {
	var during [2]uint64
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			during[0] = word(panicOff)
			recover()
		}()
		panic("calltrail: probing g._panic")
	}()
	<-done
	done = make(chan struct{})
	go func() {
		defer close(done)
		defer func() { during[1] = word(panicOff) }()
		runtime.Goexit()
	}()
	<-done
	return during[0] != 0 && during[1] != 0
}

// Info reads the calling goroutine's parent id, the pc of the go
// statement that created it and the pc it started at; zeros when
// HasParents is false.
func Info() (parent uint64, gopc, startpc uintptr) {
	if parentOff == 0 {
		return 0, 0, 0
	}
	return word(parentOff), uintptr(word(gopcOff)), uintptr(word(startOff))
}

// G returns the address of the calling goroutine's g in the runtime, 0
// where there is no assembly to read it. A goroutine's g is the same as
// long as it runs; another goroutine may have it after it ends.
func G() uintptr { return gptr() }

// Goid returns the id of the calling goroutine.
func Goid() uint64 {
	if fast {
		id, _, _, _ := readP()
		return id
	}
	return StackGoid()
}

// probeHops finds how many saved frame pointers separate Trace's view of
// the stack from its caller's return address, by asking the same question
// from a function shaped like Trace and checking the answer with
// runtime.Callers. hops stays -1, and Trace uses runtime.Callers, when no
// answer checks out.
func probeHops() {
	if !Have {
		return
	}
	for h := 0; h < 4; h++ {
		if ok := tryHops(h); ok {
			hops = h
			return
		}
	}
}

//go:noinline
func tryHops(h int) bool {
	got := callerLike(h)
	var pcs [1]uintptr
	runtime.Callers(1, pcs[:])
	return got != 0 && funcName(got-1) == funcName(pcs[0]-1)
}

// callerLike has the shape of Trace: a non-inlined function asking for its
// own return address.
//
//go:noinline
func callerLike(h int) uintptr {
	return Caller(uintptr(h))
}
