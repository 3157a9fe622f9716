package analysis

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// Wait is time calls spent waiting on one thing, as the Go runtime's
// block profile names it ("sync.(*Mutex).Lock", "channel receive").
type Wait struct {
	On string
	Ns int64
}

// splitProfiles uses the Go runtime's profiles stored in the trace to
// split functions' and chains' time into on-CPU and waiting, and to name
// what they waited on. Functions and chains are matched by name.
func (p *Profile) splitProfiles(pprofs map[string][]byte) {
	names := map[string]*Func{}
	for _, f := range p.Funcs {
		names[f.Name] = f
	}
	if data, ok := pprofs["cpu"]; ok {
		if prof, err := parseProfile(data); err == nil {
			if p.TotalCPU = sampled(prof); p.TotalCPU >= int64(MinCPU) {
				p.HasCPU = true
				p.TotalCPU = 0 // counted again, without the tracer's own
				p.cpu(prof, names)
			} else {
				p.ThinCPU = true
			}
		} else {
			p.ProfileErrors = append(p.ProfileErrors, fmt.Errorf("cpu profile left out: %w", err))
		}
	}
	for _, kind := range []string{"block", "mutex"} {
		data, ok := pprofs[kind]
		if !ok {
			continue
		}
		prof, err := parseProfile(data)
		if err != nil {
			p.ProfileErrors = append(p.ProfileErrors, fmt.Errorf("%s profile left out: %w", kind, err))
			continue
		}
		p.HasWaits = true
		p.waits(prof, names, kind == "mutex")
	}
	for _, f := range p.Funcs {
		if p.HasCPU {
			f.Wait = max(f.Total-f.CPU, 0)
		}
		sort.Slice(f.Waits, func(i, j int) bool { return f.Waits[i].Ns > f.Waits[j].Ns })
		sort.Slice(f.Callees, func(i, j int) bool { return f.Callees[i].Ns > f.Callees[j].Ns })
		sort.Slice(f.Syscalls, func(i, j int) bool { return f.Syscalls[i].Ns > f.Syscalls[j].Ns })
	}
	if p.HasCPU {
		p.Walk(func(n *Node) { n.Wait = max(n.Total-n.CPU, 0) })
	}
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
// thousands of times, to gigabytes.
const maxInflation = 64

// parseProfile parses a profile as runtime/pprof writes it, gzipped,
// inflating it to at most maxInflation times its size (and a mebibyte).
func parseProfile(data []byte) (*profile.Profile, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		limit := int64(len(data))*maxInflation + 1<<20
		raw, err := io.ReadAll(io.LimitReader(zr, limit+1))
		if err != nil {
			return nil, err
		}
		if int64(len(raw)) > limit {
			return nil, fmt.Errorf("it inflates to more than %d times its %d bytes", maxInflation, len(data))
		}
		data = raw
	}
	return profile.ParseData(data)
}

// runtimePrefix starts the names of the calltrail runtime's functions.
const runtimePrefix = "github.com/calltrail/calltrail."

// stack returns a sample's function names from the outermost call in, and
// whether the sample is the tracer's own work: calltrail's runtime on the
// stack (recording a call, its writer), which is no evidence about the
// program. inlined[i] reports that names[i] was inlined into the
// function before it, and so ran in that function's frame.
func stack(s *profile.Sample) (names []string, inlined []bool, tracing bool) {
	for i := len(s.Location) - 1; i >= 0; i-- {
		lines := s.Location[i].Line
		for j := len(lines) - 1; j >= 0; j-- {
			if f := lines[j].Function; f != nil {
				if f.Name == "runtime.asyncPreempt" {
					// The scheduler stopped the function there: the
					// sample is the function's, at that point, not a
					// call it made.
					return names, inlined, tracing
				}
				names = append(names, f.Name)
				inlined = append(inlined, j < len(lines)-1)
				tracing = tracing || strings.HasPrefix(f.Name, runtimePrefix)
			}
		}
	}
	return names, inlined, tracing
}

// callee returns the index in a sample's stack of what the traced function
// at index i was running: the first function after it that is not its
// own code inlined into its frame (functions of its package the compiler
// inlined, which calltrail leaves alone so that they stay inlined), or -1
// when the sample is in its own code.
func callee(names []string, inlined []bool, i int) int {
	pkg := funcPackage(names[i])
	for k := i + 1; k < len(names); k++ {
		if !inlined[k] || funcPackage(names[k]) != pkg {
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
// each, and to the chain of traced calls it was taken in.
func (p *Profile) cpu(prof *profile.Profile, names map[string]*Func) {
	vi := valueIndex(prof, "nanoseconds")
	for _, s := range prof.Sample {
		v := s.Value[vi]
		st, inlined, tracing := stack(s)
		if tracing {
			p.TracingCPU += v
			continue
		}
		p.TotalCPU += v
		seen := map[*Func]bool{}
		n := p.Root
		// The innermost traced function, and what it called.
		for i := len(st) - 1; i >= 0; i-- {
			if f := names[st[i]]; f != nil {
				f.SelfCPU += v
				if k := callee(st, inlined, i); k >= 0 {
					f.Callees = addTo(f.Callees, st[k], v)
					if inSyscall(st[k:]) {
						f.Syscalls = addTo(f.Syscalls, st[k], v)
					}
				}
				break
			}
		}
		for _, name := range st {
			f := names[name]
			if f == nil {
				continue
			}
			if !seen[f] {
				seen[f] = true
				f.CPU += v
			}
			if n != nil {
				n = n.childByName(name, p.Names)
				if n != nil {
					n.CPU += v
				}
			}
		}
	}
}

// inSyscall says whether the untraced part of a CPU sample's stack is in
// a system call that blocks its thread: file I/O, not the network. The
// CPU profile counts time in the kernel too: a sample taken there has the
// system call's Go wrapper at the top. Network connections wait in the
// runtime's poller instead, for a peer that may just be slow to talk.
func inSyscall(st []string) bool {
	sys := false
	for _, name := range st {
		if strings.HasPrefix(name, "net.") || strings.HasPrefix(name, "crypto/tls.") {
			return false
		}
		sys = sys || strings.HasPrefix(name, "syscall.") || strings.HasSuffix(name, "/syscall.Syscall6") ||
			strings.HasPrefix(name, "runtime.entersyscall") || strings.HasPrefix(name, "runtime.exitsyscall")
	}
	return sys
}

func (n *Node) childByName(name string, names func(uint32) string) *Node {
	for _, c := range n.Children {
		if names(c.Func) == name {
			return c
		}
	}
	return nil
}

// waits adds the delay of each block or mutex sample to the traced
// functions on its stack, under what was waited on. A mutex profile
// records contention where the lock was released: its traced function
// nearest the release held the lock.
func (p *Profile) waits(prof *profile.Profile, names map[string]*Func, mutex bool) {
	vi := valueIndex(prof, "nanoseconds")
	for _, s := range prof.Sample {
		v := s.Value[vi]
		st, _, tracing := stack(s)
		if tracing {
			continue
		}
		if mutex {
			for i := len(st) - 1; i >= 0; i-- {
				if f := names[st[i]]; f != nil {
					f.Held += v
					break
				}
			}
			continue
		}
		on := waitedOn(st)
		seen := map[*Func]bool{}
		for _, name := range st {
			if f := names[name]; f != nil && !seen[f] {
				seen[f] = true
				f.addWait(on, v)
			}
		}
	}
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
func waitedOn(st []string) string {
	for i := len(st) - 1; i >= 0; i-- {
		name := st[i]
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
