package calltrail

import (
	"bytes"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
)

// profiler collects the Go runtime's own profiles while tracing, for the
// analysis to split call times into on-CPU and waiting, and to name what
// calls waited on. CALLTRAIL_PROFILES lists them ("cpu,mutex,block"; calltrail
// run and test set it); CALLTRAIL_MUTEX_FRACTION and CALLTRAIL_BLOCK_RATE
// set their rates.
type profiler struct {
	cpu          *bytes.Buffer // nil unless the CPU profile runs
	mutex, block bool
}

const (
	defaultMutexFraction = 10     // one contention event in 10
	defaultBlockRate     = 10_000 // a blocking event per 10µs blocked
)

func startProfiles(list string) *profiler {
	p := &profiler{}
	for _, name := range strings.Split(list, ",") {
		switch strings.TrimSpace(name) {
		case "cpu":
			p.cpu = new(bytes.Buffer)
			if err := pprof.StartCPUProfile(p.cpu); err != nil {
				p.cpu = nil // the program profiles itself: leave it be
			}
		case "mutex":
			p.mutex = true
			runtime.SetMutexProfileFraction(envInt("CALLTRAIL_MUTEX_FRACTION", defaultMutexFraction))
		case "block":
			p.block = true
			runtime.SetBlockProfileRate(envInt("CALLTRAIL_BLOCK_RATE", defaultBlockRate))
		}
	}
	return p
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n >= 0 {
		return n
	}
	return def
}

// stop ends the profiles and returns them by name, as runtime/pprof writes
// them. It may be called more than once; later calls return nothing.
func (p *profiler) stop() map[string][]byte {
	if p == nil {
		return nil
	}
	out := map[string][]byte{}
	if p.cpu != nil {
		pprof.StopCPUProfile()
		out["cpu"] = p.cpu.Bytes()
		p.cpu = nil
	}
	for name, on := range map[string]bool{"mutex": p.mutex, "block": p.block} {
		if !on {
			continue
		}
		var buf bytes.Buffer
		if err := pprof.Lookup(name).WriteTo(&buf, 0); err == nil {
			out[name] = buf.Bytes()
		}
	}
	p.mutex, p.block = false, false
	return out
}
