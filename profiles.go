package calltrail

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/calltrail/calltrail/internal/profhook"
)

// profiler collects the Go runtime's own profiles while tracing, for the
// analysis to split call times into on-CPU and waiting, and to name what
// calls waited on. CALLTRAIL_PROFILES lists them ("cpu,mutex,block"; calltrail
// run and test set it, calltrail build --profiles sets the default);
// CALLTRAIL_MUTEX_FRACTION and CALLTRAIL_BLOCK_RATE set their rates.
//
// The profiles are runtime/pprof's, through package profiles, which
// registers itself after the runtime has started: they start then (see
// profhook), and not at all in a program built without it.
type profiler struct {
	list string // as CALLTRAIL_PROFILES gives it

	mu           sync.Mutex
	cpu          *bytes.Buffer // nil unless the CPU profile runs
	wantCPU      bool
	mutex, block bool
	stopped      bool
}

const (
	defaultMutexFraction = 10     // one contention event in 10
	defaultBlockRate     = 10_000 // a blocking event per 10µs blocked
)

func startProfiles(list string) *profiler {
	p := &profiler{list: list}
	for _, name := range strings.Split(list, ",") {
		switch strings.TrimSpace(name) {
		case "cpu":
			p.wantCPU = true
		case "mutex":
			p.mutex = true
		case "block":
			p.block = true
		}
	}
	if p.wantCPU || p.mutex || p.block {
		profhook.When(p.start)
	}
	return p
}

// start starts the profiles, unless the trace has ended already: the CPU
// profile, unless the program profiles itself, and the runtime's
// sampling of contention and blocking, which a program without package
// profiles would pay for and never see.
func (p *profiler) start(pp profhook.Profiler) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	if p.mutex {
		runtime.SetMutexProfileFraction(envInt("CALLTRAIL_MUTEX_FRACTION", defaultMutexFraction))
	}
	if p.block {
		runtime.SetBlockProfileRate(envInt("CALLTRAIL_BLOCK_RATE", defaultBlockRate))
	}
	if p.wantCPU {
		buf := new(bytes.Buffer)
		if err := pp.StartCPUProfile(buf); err == nil {
			p.cpu = buf
		}
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n >= 0 {
		return n
	}
	return def
}

// stop ends the profiles and returns them by name, as runtime/pprof writes
// them. It may be called more than once; later calls return nothing. A
// program built without package profiles has none, and says so.
func (p *profiler) stop() map[string][]byte {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil
	}
	p.stopped = true
	pp := profhook.Get()
	if pp == nil {
		if p.wantCPU || p.mutex || p.block {
			fmt.Fprintf(os.Stderr, "calltrail: CALLTRAIL_PROFILES=%s: this program was built without the Go runtime's profiles (calltrail build --profiles %s links them; a program instrumented in its source imports github.com/calltrail/calltrail/profiles): the trace has none\n", p.list, p.list)
		}
		return nil
	}
	out := map[string][]byte{}
	if p.cpu != nil {
		pp.StopCPUProfile()
		out["cpu"] = p.cpu.Bytes()
		p.cpu = nil
	}
	for name, on := range map[string]bool{"mutex": p.mutex, "block": p.block} {
		if !on {
			continue
		}
		var buf bytes.Buffer
		if err := pp.WriteProfile(name, &buf); err == nil {
			out[name] = buf.Bytes()
		}
	}
	return out
}
