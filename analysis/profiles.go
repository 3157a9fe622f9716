package analysis

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/calltrail/calltrail/tracefile"
	"github.com/google/pprof/profile"
)

// Wait is time calls spent waiting on one thing, as the Go runtime's
// block profile names it ("sync.(*Mutex).Lock", "channel receive").
type Wait struct {
	On string `json:"on"`
	Ns int64  `json:"ns"`
}

// splitProfiles uses the Go runtime's profiles stored in the trace to
// split functions' and chains' time into on-CPU, tracing and waiting, and
// to name what they waited on. info gives the trace's functions' names
// and places, to find them in the profiles (see resolver).
//
// With keep, the analysis is of the calls of the spans keep holds, and so
// are its samples: those of the CPU profile labelled with one of them
// (tracefile.SpanLabel). Profiles whose samples name no span, which do not
// tell requests apart, are left out, and ProfilesLeftOut says so.
func (p *Profile) splitProfiles(pprofs map[string][]byte, info func(uint32) tracefile.Func, keep func(tracefile.SpanID) bool) {
	funcs := make([]*Func, 0, len(p.Funcs))
	for _, f := range p.Funcs {
		funcs = append(funcs, f)
	}
	res := newResolver(funcs, info, p.Meta.Package)
	if data, ok := pprofs["cpu"]; ok {
		switch prof, err := parseProfile(data); {
		case err != nil:
			p.ProfileErrors = append(p.ProfileErrors, fmt.Errorf("cpu profile left out: %w", err))
		case keep != nil && !spanSamples(prof, keep):
			p.leftOut("the trace's CPU profile")
		case sampled(prof) >= int64(MinCPU):
			p.HasCPU = true
			p.cpu(prof, res, p.chainResolver(funcs, info)) // counts TotalCPU, without the tracer's own
		default:
			p.TotalCPU, p.ThinCPU = sampled(prof), true
		}
	}
	for _, kind := range []string{"block", "mutex"} {
		data, ok := pprofs[kind]
		if !ok {
			continue
		}
		if keep != nil {
			// Their samples carry no labels.
			p.leftOut("the trace's " + kind + " profile")
			continue
		}
		prof, err := parseProfile(data)
		if err != nil {
			p.ProfileErrors = append(p.ProfileErrors, fmt.Errorf("%s profile left out: %w", kind, err))
			continue
		}
		p.HasWaits = true
		p.waits(prof, res, kind == "mutex")
	}
	if p.HasCPU {
		p.splitCPU()
	}
	for _, f := range p.Funcs {
		sort.Slice(f.Waits, func(i, j int) bool { return f.Waits[i].Ns > f.Waits[j].Ns })
		sort.Slice(f.OwnWaits, func(i, j int) bool { return f.OwnWaits[i].Ns > f.OwnWaits[j].Ns })
		sort.Slice(f.Callees, func(i, j int) bool { return f.Callees[i].Ns > f.Callees[j].Ns })
		sort.Slice(f.Syscalls, func(i, j int) bool { return f.Syscalls[i].Ns > f.Syscalls[j].Ns })
	}
}

// splitCPU splits each chain's wall time into time on CPU, tracing and
// waiting, then each function's. A sample stands for a period of CPU time
// (10ms): one in a chain whose calls ran 2ms of their own would put them
// on CPU longer than they ran. No chain is: the samples of a chain's own
// code count up to its self time, and what is over goes to its caller's
// chain, as the period was spent around the call, up to where there is
// room. A chain's split is its own and its callees' chains' added up, so
// that none waits less than its callees. A function's figures are its
// chains' added up, the chains outermost in its own recursion only, as
// its total is: report, chains, the flame graphs and the web UI give each
// function one split. (Split by function instead, a sample's excess in
// one chain took time off another's wait.)
func (p *Profile) splitCPU() {
	// cpu left each chain's samples and its callees' in CPU and
	// Tracing. First each chain's own (parents before children, whose
	// figures are still cpu's); then, children before parents, each
	// chain's own within its self time, the rest handed to its caller,
	// and its callees' added back.
	var nodes []*Node
	p.Walk(func(n *Node) {
		nodes = append(nodes, n)
		for _, c := range n.Children {
			n.CPU -= c.CPU
			n.Tracing -= c.Tracing
		}
	})
	for _, f := range p.Funcs {
		f.CPU, f.Tracing, f.Wait = 0, 0, 0
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		cpu := min(n.CPU, n.Self)
		tracing := min(n.Tracing, n.Self-cpu)
		if n.Parent != p.Root {
			n.Parent.CPU += n.CPU - cpu
			n.Parent.Tracing += n.Tracing - tracing
		}
		n.CPU, n.Tracing = cpu, tracing
		for _, c := range n.Children {
			n.CPU += c.CPU
			n.Tracing += c.Tracing
		}
		n.Wait = max(n.Total-n.CPU-n.Tracing, 0)
		if f := p.Funcs[n.Func]; f != nil && n.up < 0 {
			f.CPU += n.CPU
			f.Tracing += n.Tracing
			f.Wait += n.Wait
		}
	}
}

// A resolver finds which traced function a profile's function is. Most
// are the same name in both, but the compiler names some functions
// otherwise than calltrail does from the source: an instance of a generic
// function by its shape (main.Sum[go.shape.int] for main.Sum[...]), and a
// closure of a function inlined elsewhere after the function it was
// inlined into (pkg.Handler.observe.func5 for pkg.observe.func1). Those
// are found by the package and the place they start, which the profile
// records, and which the trace's function table holds. In a test binary
// of a command, the runtime names the command's functions by its import
// path (example.com/cmd/tool.run), where calltrail names them main.run,
// as in the command itself.
type resolver struct {
	byName map[string]*Func
	at     map[place][]*Func
	memo   map[*profile.Function]*Func
	// mainPath is the import path of the program's main package, or
	// of the package a test binary tests: the build records
	// example.com/cmd/tool for a command's tests, example.com/lib.test
	// for a library's.
	mainPath string
}

// A place is where a function's declaration starts: its package, file
// name and the line of its func keyword.
type place struct {
	pkg, file string
	line      int
}

func newResolver(funcs []*Func, info func(uint32) tracefile.Func, mainPath string) *resolver {
	r := &resolver{byName: map[string]*Func{}, at: map[place][]*Func{}, memo: map[*profile.Function]*Func{}}
	r.mainPath = strings.TrimSuffix(mainPath, ".test")
	for _, f := range funcs {
		r.byName[f.Name] = f
		if tf := info(f.ID); tf.Line > 0 {
			pl := place{funcPackage(f.Name), filepath.Base(tf.File), tf.Line}
			r.at[pl] = append(r.at[pl], f)
		}
	}
	return r
}

// of returns the traced function fn is, or nil. A place that two traced
// functions share (a closure on its function's first line) tells them
// apart by whether each is a closure, or not at all.
func (r *resolver) of(fn *profile.Function) *Func {
	if f, ok := r.memo[fn]; ok {
		return f
	}
	f := r.named(fn.Name, fn)
	if rest, ok := strings.CutPrefix(fn.Name, r.mainPath+"."); ok && f == nil && r.mainPath != "" {
		f = r.named("main."+rest, fn) // a command's, tested
	}
	r.memo[fn] = f
	return f
}

// named finds the traced function that fn, named name, is.
func (r *resolver) named(name string, fn *profile.Function) *Func {
	if f := r.byName[name]; f != nil {
		return f
	}
	if f := r.byName[GenericName(name)]; f != nil {
		return f
	}
	if fn.StartLine <= 0 {
		return nil
	}
	var found []*Func
	for _, c := range r.at[place{funcPackage(name), filepath.Base(fn.Filename), int(fn.StartLine)}] {
		if isClosure(c.Name) == isClosure(name) {
			found = append(found, c)
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return nil
}

// GenericName writes a function name as calltrail names it, with the type
// arguments of generic functions and types as [...], whatever the
// compiler wrote there: main.Sum[go.shape.int] is main.Sum[...], and
// main.(*List[go.shape.struct { a int }]).Push main.(*List[...]).Push.
func GenericName(name string) string {
	if strings.IndexByte(name, '[') < 0 {
		return name
	}
	var b strings.Builder
	depth := 0
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '[':
			if depth == 0 {
				b.WriteString("[...]")
			}
			depth++
		case c == ']' && depth > 0:
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// isClosure says whether a function name is a function literal's, as
// the compiler and calltrail both name them: F.func1, F.func1.2.
func isClosure(name string) bool {
	i := strings.LastIndex(name, ".func")
	if i < 0 {
		return false
	}
	rest := name[i+len(".func"):]
	if rest == "" {
		return false
	}
	for _, c := range rest {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return rest[0] != '.'
}

// MinCPU is the CPU time below which a CPU profile is too thin to split
// time on and off CPU, or to blame anything on: at the Go runtime's 100
// samples a second, five samples. A program that ran 47ms on CPU would
// otherwise show as waiting for most of it.
const MinCPU = 50 * time.Millisecond

// sampled is the CPU time of a CPU profile's samples, in nanoseconds.
func sampled(prof *profile.Profile) int64 {
	vi := valueIndex(prof, "nanoseconds")
	var t int64
	for _, s := range prof.Sample {
		t += s.Value[vi]
	}
	return t
}

// maxInflation bounds how much larger than its gzip a profile may be: a
// profile.proto compresses some five to ten times, a crafted one
// thousands of times, to gigabytes. maxInflated bounds it whatever its
// size: a trace's chunk can hold 64 MiB of gzip, which 64 times is 4 GiB.
// The Go runtime's profiles of a long run are a few megabytes.
const maxInflation = 64

var maxInflated int64 = 256 << 20

// parseProfile parses a profile as runtime/pprof writes it, gzipped,
// inflating it to at most maxInflation times its size (and a mebibyte),
// and maxInflated.
func parseProfile(data []byte) (*profile.Profile, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		limit := min(int64(len(data))*maxInflation+1<<20, maxInflated)
		raw, err := io.ReadAll(io.LimitReader(zr, limit+1))
		if err != nil {
			return nil, err
		}
		if int64(len(raw)) > limit {
			return nil, fmt.Errorf("it inflates to more than %d bytes, from %d", limit, len(data))
		}
		data = raw
	}
	return profile.ParseData(data)
}

// runtimePrefix starts the names of the calltrail runtime's functions.
const runtimePrefix = "github.com/calltrail/calltrail."

// stack returns a sample's functions from the outermost call in, and
// whether the sample is the tracer's own work: calltrail's runtime on the
// stack (recording a call, its writer), which is no evidence about the
// program. inlined[i] reports that fns[i] was inlined into the function
// before it, and so ran in that function's frame.
func stack(s *profile.Sample) (fns []*profile.Function, inlined []bool, tracing bool) {
	for i := len(s.Location) - 1; i >= 0; i-- {
		lines := s.Location[i].Line
		for j := len(lines) - 1; j >= 0; j-- {
			if f := lines[j].Function; f != nil {
				if f.Name == "runtime.asyncPreempt" {
					// The scheduler stopped the function there: the
					// sample is the function's, at that point, not a
					// call it made.
					return fns, inlined, tracing
				}
				fns = append(fns, f)
				inlined = append(inlined, j < len(lines)-1)
				tracing = tracing || strings.HasPrefix(f.Name, runtimePrefix)
			}
		}
	}
	return fns, inlined, tracing
}

// callee returns the index in a sample's stack of what the traced function
// at index i was running: the first function after it that is not its
// own code inlined into its frame (functions of its package the compiler
// inlined, which calltrail leaves alone so that they stay inlined), or -1
// when the sample is in its own code. A wrapper the compiler made (a
// method promoted from an embedded field, a method called through an
// interface of a value type) is no callee but part of the call it makes:
// a sample in its own few instructions is the caller's, and one below it
// the wrapped method's, traced or not.
func callee(fns []*profile.Function, inlined []bool, i int) int {
	pkg := funcPackage(fns[i].Name)
	for k := i + 1; k < len(fns); k++ {
		if fns[k].Filename == "<autogenerated>" {
			continue
		}
		if !inlined[k] || funcPackage(fns[k].Name) != pkg {
			return k
		}
	}
	return -1
}

// funcPackage returns the package path of a function name as the Go
// runtime writes it: main for main.(*T).M, example.com/a/b for
// example.com/a/b.F.func1. A dot in the path's last element (yaml.v3)
// cuts it short, the same way for every function of the package, which
// is all that comparing two packages needs.
func funcPackage(name string) string {
	slash := strings.LastIndexByte(name, '/') + 1
	if dot := strings.IndexByte(name[slash:], '.'); dot >= 0 {
		return name[:slash+dot]
	}
	return name
}

func valueIndex(prof *profile.Profile, unit string) int {
	for i, st := range prof.SampleType {
		if st.Unit == unit {
			return i
		}
	}
	return len(prof.SampleType) - 1
}

// cpu adds each CPU sample to the traced functions on its stack, once
// each, and to the chain of traced calls it was taken in: as their CPU
// time, or, for a sample in calltrail's runtime, as their tracing time.
func (p *Profile) cpu(prof *profile.Profile, res, chains *resolver) {
	vi := valueIndex(prof, "nanoseconds")
	for _, s := range prof.Sample {
		v := s.Value[vi]
		st, inlined, tracing := stack(s)
		if !p.focused(st, res) {
			continue
		}
		if tracing {
			p.TracingCPU += v
		} else {
			p.TotalCPU += v
			p.selfCPU(st, inlined, res, v)
		}
		// The sample's chain, and each chain it is in: splitCPU gives
		// functions their share from their chains'.
		n := p.Root
		for _, fn := range st {
			f := chains.of(fn)
			if f == nil {
				continue
			}
			if n = n.existing(f.ID); n == nil {
				break
			}
			if tracing {
				n.Tracing += v
			} else {
				n.CPU += v
			}
		}
	}
}

// chainResolver is a resolver of every function with a chain in p's
// tree: funcs, those p shows, and those a focus shows only as the
// callers of what it shows, which chains pass through.
func (p *Profile) chainResolver(funcs []*Func, info func(uint32) tracefile.Func) *resolver {
	all := slices.Clone(funcs)
	seen := map[uint32]bool{}
	p.Walk(func(n *Node) {
		if p.Funcs[n.Func] == nil && !seen[n.Func] {
			seen[n.Func] = true
			all = append(all, &Func{ID: n.Func, Name: p.Name(n.Func)})
		}
	})
	return newResolver(all, info, p.Meta.Package)
}

// selfCPU adds a sample of the program's code to the innermost traced
// function on its stack, and to what that function called.
func (p *Profile) selfCPU(st []*profile.Function, inlined []bool, res *resolver, v int64) {
	for i := len(st) - 1; i >= 0; i-- {
		f := res.of(st[i])
		if f == nil {
			continue
		}
		f.SelfCPU += v
		if k := callee(st, inlined, i); k >= 0 {
			f.Callees = addTo(f.Callees, st[k].Name, v)
			if inSyscall(st[k:]) {
				f.Syscalls = addTo(f.Syscalls, st[k].Name, v)
			}
		}
		return
	}
}

// inSyscall says whether the untraced part of a CPU sample's stack is in
// a system call that blocks its thread: file I/O, not the network. The
// CPU profile counts time in the kernel too: a sample taken there has the
// system call's Go wrapper at the top. Network connections wait in the
// runtime's poller instead, for a peer that may just be slow to talk.
func inSyscall(st []*profile.Function) bool {
	sys := false
	for _, fn := range st {
		name := fn.Name
		if strings.HasPrefix(name, "net.") || strings.HasPrefix(name, "crypto/tls.") {
			return false
		}
		sys = sys || strings.HasPrefix(name, "syscall.") || strings.HasSuffix(name, "/syscall.Syscall6") ||
			strings.HasPrefix(name, "runtime.entersyscall") || strings.HasPrefix(name, "runtime.exitsyscall")
	}
	return sys
}

// existing returns n's child for function fn, or nil.
func (n *Node) existing(fn uint32) *Node {
	for _, c := range n.Children {
		if c.Func == fn {
			return c
		}
	}
	return nil
}

// waits adds the delay of each block or mutex sample to the traced
// functions on its stack, under what was waited on. A mutex profile
// records contention where the lock was released: its traced function
// nearest the release held the lock.
func (p *Profile) waits(prof *profile.Profile, res *resolver, mutex bool) {
	vi := valueIndex(prof, "nanoseconds")
	for _, s := range prof.Sample {
		v := s.Value[vi]
		st, _, tracing := stack(s)
		if tracing || !p.focused(st, res) {
			continue
		}
		if mutex {
			for i := len(st) - 1; i >= 0; i-- {
				if f := res.of(st[i]); f != nil {
					f.Held += v
					break
				}
			}
			continue
		}
		on := waitedOn(st)
		seen := map[*Func]bool{}
		var inner *Func
		for _, fn := range st {
			if f := res.of(fn); f != nil {
				inner = f
				if !seen[f] {
					seen[f] = true
					f.addWait(on, v)
				}
			}
		}
		if inner != nil {
			inner.OwnWaits = addTo(inner.OwnWaits, on, v)
		}
	}
}

// focused reports whether a sample of stack st is of the calls the
// analysis selects: under a focus, a traced function it matches is on
// the stack.
// CPUFocused reports whether the CPU times are of the samples with a
// focused function (-F) on their stack only: TotalCPU is then theirs, not
// the program's.
func (p *Profile) CPUFocused() bool { return p.focus != nil }

func (p *Profile) focused(st []*profile.Function, res *resolver) bool {
	if p.focus == nil {
		return true
	}
	for _, fn := range st {
		if f := res.of(fn); f != nil && p.focus.MatchString(f.Name) {
			return true
		}
	}
	return false
}

func (f *Func) addWait(on string, ns int64) { f.Waits = addTo(f.Waits, on, ns) }

func addTo(ws []Wait, on string, ns int64) []Wait {
	for i := range ws {
		if ws[i].On == on {
			ws[i].Ns += ns
			return ws
		}
	}
	return append(ws, Wait{On: on, Ns: ns})
}

// waitedOn names what a blocked stack waited on: the innermost function
// outside the runtime, or the runtime's channel operation.
func waitedOn(st []*profile.Function) string {
	for i := len(st) - 1; i >= 0; i-- {
		name := st[i].Name
		switch {
		case strings.HasPrefix(name, "runtime.chanrecv"):
			return "channel receive"
		case strings.HasPrefix(name, "runtime.chansend"):
			return "channel send"
		case name == "runtime.selectgo":
			return "select"
		case strings.HasPrefix(name, "runtime.") || strings.HasPrefix(name, "internal/") || strings.HasPrefix(name, "sync/atomic."):
			continue
		}
		return name
	}
	return "the runtime"
}

// spanSamples keeps, of prof's samples, those labelled with a span keep
// holds, and reports whether prof labels its samples with spans at all.
func spanSamples(prof *profile.Profile, keep func(tracefile.SpanID) bool) bool {
	labelled := false
	kept := prof.Sample[:0]
	for _, s := range prof.Sample {
		var id tracefile.SpanID
		if v := s.Label[tracefile.SpanLabel]; len(v) == 1 {
			if b, err := hex.DecodeString(v[0]); err == nil && len(b) == len(id) {
				copy(id[:], b)
				labelled = true
			}
		}
		if keep(id) {
			kept = append(kept, s)
		}
	}
	prof.Sample = kept
	return labelled
}

// leftOut notes that what, a profile of the whole program, is left out of
// an analysis of some requests.
func (p *Profile) leftOut(what string) {
	p.ProfilesLeftOut = true
	p.LeftOut = append(p.LeftOut, fmt.Sprintf("%s is the whole program's, not the selected requests': left out of their time", what))
}
