package calltrail

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// The hot path reads the goroutine id straight from the runtime's g, at an
// offset that changes between Go releases. probeG finds the offsets at
// start-up and checks them against what runtime.Stack prints; when that
// fails (an unknown release or architecture) calltrail falls back to
// parsing runtime.Stack, which is slow but always right.
var (
	fastG     bool    // goidOff is verified; gstate may be used
	goidOff   uintptr // offset of g.goid
	parentOff uintptr // offset of g.parentGoid, 0 if unknown
	gopcOff   uintptr // offset of g.gopc, 0 if unknown
	startOff  uintptr // offset of g.startpc, 0 if unknown
	fpHops    = -1    // frame pointer hops for Trace's caller, -1 if unknown
)

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

// stackGoid parses the id of the calling goroutine out of runtime.Stack:
// "goroutine 18 [running]:". Buffers are pooled: runtime.Stack keeps its
// argument reachable, so a local buffer would escape on every call.
func stackGoid() uint64 {
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
	p.goid = stackGoid()
	for i := range p.words {
		p.words[i] = gword(uintptr(i * 8))
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

// probeG sets fastG, goidOff and the optional offsets.
func probeG() {
	if !haveG {
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
	goidOff, fastG = off, true

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

// gInfo reads the calling goroutine's parent id, the pc of the go
// statement that created it and the pc it started at.
func gInfo() (parent uint64, gopc, startpc uintptr) {
	if parentOff == 0 {
		return 0, 0, 0
	}
	return gword(parentOff), uintptr(gword(gopcOff)), uintptr(gword(startOff))
}

// curGoid returns the id of the calling goroutine.
func curGoid() uint64 {
	if fastG {
		id, _, _ := gstate(goidOff)
		return id
	}
	return stackGoid()
}

// probeCallers finds how many saved frame pointers separate Trace's view
// of the stack from its caller's return address, by asking the same
// question from a function shaped like Trace and checking the answer with
// runtime.Callers. fpHops stays -1, and Trace uses runtime.Callers, when
// no answer checks out.
func probeCallers() {
	if !haveG {
		return
	}
	for h := 0; h < 4; h++ {
		if ok := probeHops(h); ok {
			fpHops = h
			return
		}
	}
}

//go:noinline
func probeHops(h int) bool {
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
	return fpcaller(uintptr(h))
}
