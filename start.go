package calltrail

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/calltrail/calltrail/internal/clock"
	"github.com/calltrail/calltrail/internal/endpoint"
	"github.com/calltrail/calltrail/internal/gstate"
	"github.com/calltrail/calltrail/internal/profhook"
	"github.com/calltrail/calltrail/internal/ring"
	"github.com/calltrail/calltrail/internal/traceout"
	"github.com/calltrail/calltrail/internal/tracewrite"
)

// options come from the environment of the traced program.
type options struct {
	out    string        // CALLTRAIL_OUT: trace file, default calltrail.out
	text   string        // CALLTRAIL_TEXT: "stderr" or a path for the live view
	buffer int           // CALLTRAIL_BUFFER: bytes of ring memory, default 32 MiB
	every  time.Duration // CALLTRAIL_FLUSH: write interval, default 100ms
	full   fullPolicy    // CALLTRAIL_FULL: wait (the default) or drop
	flight bool          // CALLTRAIL_MODE=flight: keep the last calls in memory, write no file
	paused bool          // CALLTRAIL=paused: start with recording off
	// CALLTRAIL_HTTP: the control endpoint's address, which package live
	// serves; here, it chooses flight mode
	http string
	// CALLTRAIL_TRIGGER: calls whose window is written to a file, in
	// CALLTRAIL_TRIGGER_DIR, at most one file every CALLTRAIL_TRIGGER_EVERY.
	triggers     []rule
	triggerDir   string
	triggerEvery time.Duration
}

const (
	defaultBuffer = 32 << 20
	slotSize      = 16
	lagBytes      = 512 << 10 // about a core's L2: see writer.drain
)

func optionsFromEnv() (options, error) {
	o := options{out: "calltrail.out", buffer: defaultBuffer, every: 100 * time.Millisecond}
	if v := os.Getenv("CALLTRAIL_OUT"); v != "" {
		o.out = v
	}
	o.text = os.Getenv("CALLTRAIL_TEXT")
	if v := os.Getenv("CALLTRAIL_BUFFER"); v != "" {
		n, err := parseSize(v)
		if err != nil {
			return o, fmt.Errorf("CALLTRAIL_BUFFER=%q: %v", v, err)
		}
		o.buffer = n
	}
	switch v := os.Getenv("CALLTRAIL_FULL"); v {
	case "", "wait":
		o.full = fullWait
	case "drop":
		o.full = fullDrop
	default:
		return o, fmt.Errorf("CALLTRAIL_FULL=%q: want wait (the default: a goroutine whose ring is full waits for the writer) or drop (the call is dropped and counted)", v)
	}
	o.http = os.Getenv("CALLTRAIL_HTTP")
	switch v := os.Getenv("CALLTRAIL_MODE"); v {
	case "":
		// A program with a control endpoint is asked for its calls
		// there, not in a file.
		o.flight = o.http != ""
	case "file":
	case "flight":
		o.flight = true
	default:
		return o, fmt.Errorf("CALLTRAIL_MODE=%q: want file (the default: every call to the trace file) or flight (the last calls in memory, within CALLTRAIL_BUFFER)", v)
	}
	switch v := os.Getenv("CALLTRAIL"); v {
	case "", "on", "1":
	case "paused":
		o.paused = true
	default: // off and 0 never get here
		return o, fmt.Errorf("CALLTRAIL=%q: want on (the default), paused (traced, recording switched on later) or off", v)
	}
	switch v := os.Getenv("CALLTRAIL_CLOCK"); v {
	case "", "tsc", "mono", "monotonic":
	default:
		return o, fmt.Errorf("CALLTRAIL_CLOCK=%q: want tsc (the cycle counter, where the system trusts it: the default) or mono (the monotonic clock)", v)
	}
	if v := os.Getenv("CALLTRAIL_TRIGGER"); v != "" {
		rules, err := parseTriggers(v)
		if err != nil {
			return o, err
		}
		o.triggers = rules
		if os.Getenv("CALLTRAIL_MODE") == "" {
			o.flight = true // a trigger writes the flight recorder's window
		} else if !o.flight {
			return o, fmt.Errorf("CALLTRAIL_TRIGGER needs the flight recorder, not CALLTRAIL_MODE=%s", os.Getenv("CALLTRAIL_MODE"))
		}
		o.triggerDir, o.triggerEvery = ".", 10*time.Second
		if d := os.Getenv("CALLTRAIL_TRIGGER_DIR"); d != "" {
			// Said now, not when a trigger first fires and its window
			// is lost.
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				return o, fmt.Errorf("CALLTRAIL_TRIGGER_DIR=%q: no such directory: each trigger writes its window there", d)
			}
			o.triggerDir = d
		}
		if v := os.Getenv("CALLTRAIL_TRIGGER_EVERY"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < minTriggerEvery {
				return o, fmt.Errorf("CALLTRAIL_TRIGGER_EVERY=%q: want a duration of at least %v, such as 10s: each trigger writes a window to disk", v, minTriggerEvery)
			}
			o.triggerEvery = d
		}
	}
	if v := os.Getenv("CALLTRAIL_FLUSH"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > time.Minute {
			return o, fmt.Errorf("CALLTRAIL_FLUSH=%q: want a duration such as 100ms, at most 1m", v)
		}
		o.every = d
	}
	return o, nil
}

// parseSize reads "64MiB", "64M", "1G", "65536".
func parseSize(s string) (int, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	u = strings.TrimSuffix(strings.TrimSuffix(u, "B"), "I")
	mult := 1
	switch {
	case strings.HasSuffix(u, "K"):
		mult = 1 << 10
	case strings.HasSuffix(u, "M"):
		mult = 1 << 20
	case strings.HasSuffix(u, "G"):
		mult = 1 << 30
	}
	if mult > 1 {
		u = u[:len(u)-1]
	}
	n, err := strconv.Atoi(u)
	if err != nil || n <= 0 || int64(n) > (1<<40)/int64(mult) || n > math.MaxInt/mult {
		return 0, fmt.Errorf("want a size such as 64MiB")
	}
	return n * mult, nil
}

// setup probes the runtime and the machine, once per process.
func setup() {
	setupOnce.Do(func() {
		gstate.Probe(hotPathInlined())
		clock.Setup()
		setHot()
	})
}

var setupOnce sync.Once

// newTracer builds the rings for o and starts the writer on out.
func newTracer(o options, out io.WriteCloser, text io.Writer, textCloser io.Closer) (*tracer, error) {
	setup()
	// Under fullWait, a ring per P the program may run on, and the
	// shared one (see claim); under fullDrop, rings by goroutine id.
	rings := o.buffer
	if o.flight {
		rings = o.buffer / 4 // the rest holds the encoded window
	}
	// A ring holds minRing slots at least: past the rings the buffer
	// pays for, Ps share the last one.
	nshards := max(runtime.GOMAXPROCS(0), runtime.NumCPU(), 1) + 1
	nshards = min(nshards, maxRings, max(rings/slotSize/minRing, 2))
	if o.full == fullDrop {
		nshards = 1 << bits.Len(uint(4*runtime.GOMAXPROCS(0)-1))
		nshards = min(max(nshards, 4), 256)
	}
	per := rings / slotSize / nshards
	per = 1 << (bits.Len(uint(max(per, minRing))) - 1) // a power of two, at least minRing
	t := makeTracer(nshards, per, o.full)

	exe, _ := os.Executable()
	if p := os.Getenv("CALLTRAIL_PROGRAM"); p != "" {
		// calltrail run built the program in a directory it removes:
		// the trace names what the user ran instead.
		exe = p
	}
	goid := "g"
	if !gstate.Fast() {
		goid = "stack"
	}
	meta := map[string]string{
		"program":    filepath.Base(exe),
		"path":       exe,
		"package":    mainPackage(),
		"args":       strings.Join(os.Args[1:], " "),
		"go":         runtime.Version(),
		"goos":       runtime.GOOS,
		"goarch":     runtime.GOARCH,
		"gomaxprocs": strconv.Itoa(runtime.GOMAXPROCS(0)),
		"pid":        strconv.Itoa(os.Getpid()),
		"start":      time.Now().Format(time.RFC3339Nano),
		"clock":      clock.Name(),
		"goid":       goid,
		"parents":    strconv.FormatBool(gstate.HasParents()),
		"buffer":     strconv.Itoa(nshards * per * slotSize),
		"shards":     strconv.Itoa(nshards),
		"full":       [...]string{fullWait: "wait", fullDrop: "drop"}[o.full],
	}
	if o.flight {
		meta["mode"] = "flight"
	}
	w := &writer{t: t, out: newSink(out), every: o.every, reqs: make(chan flushReq, 4), wakeup: make(chan struct{}, 1)}
	w.lag = uint64(min(per/8, lagBytes/slotSize))
	w.sites = map[uintptr]pcSite{}
	if !o.flight {
		w.batch.Totals = &w.totals // a snapshot counts its own
	}
	w.gbatch.Shard = 1 // the events' batch is 0
	enc, err := tracewrite.NewEncoder(w.out, meta)
	if err == nil {
		err = w.out.Sync()
	}
	if err != nil {
		w.out.Close()
		return nil, err
	}
	w.enc = enc
	w.startNs = clock.Nanotime()
	t0 := clock.Now()
	enc.Clock(t0, 0)
	w.totals.Clock(t0, 0)
	w.totals.Entered = &t.reg.nEntered
	if o.flight {
		budget := max(o.buffer-nshards*per*slotSize, 64<<10)
		w.flight = newFlight(budget, t0, func() map[string]string { return maps.Clone(meta) })
		w.seg = tracewrite.NewChunkEncoder(&w.segBuf)
		if o.triggers != nil {
			w.triggers = newTriggers(o.triggers, o.triggerDir, o.triggerEvery)
			w.triggers.w = w
		}
	}
	if text != nil {
		nsPer := 1.0
		if clock.Counter() {
			nsPer = roughNsPerUnit()
		}
		w.text = &textView{w: bufio.NewWriter(text), c: textCloser, reg: &t.reg, nsPer: nsPer, stacks: map[uint64][]textFrame{}}
	}
	t.w = w
	list, set := os.LookupEnv("CALLTRAIL_PROFILES")
	if !set {
		list = profhook.Default
	}
	// A flight recorder writes no whole run, so no whole run's
	// profiles: its snapshots carry none, and a capture takes the CPU
	// profile of its own seconds, which one running all along would
	// refuse it.
	if list != "" && w.flight == nil {
		w.profiles = startProfiles(list)
	}
	go w.run()
	return t, nil
}

// maxRings bounds the rings of a tracer: past maxRings-1 Ps, goroutines
// share the last ring. minRing is the fewest slots a ring has.
const (
	maxRings = 1024
	minRing  = 1024
)

// makeTracer makes the rings of a tracer: nshards of per slots each, both
// powers of two under fullDrop, where rings are chosen by goroutine id;
// under fullWait, nshards-1 rings of Ps and the shared one.
func makeTracer(nshards, per int, policy fullPolicy) *tracer {
	t := &tracer{
		rings:     make([]ring.Ring, nshards),
		waitqs:    make([]waitq, nshards),
		policy:    policy,
		seen:      make([]atomic.Uint64, 1<<12),
		seenMask:  1<<12 - 1,
		where:     whereTable(),
		whereMask: 1<<14 - 1,
		owned:     make([]atomic.Pointer[ring.Ring], ownedMask+1),
	}
	if policy == fullWait {
		t.perP = nshards - 1
		t.pRings = t.rings[:t.perP]
	} else {
		t.ringMask = uint64(nshards - 1)
	}
	for i := range t.rings {
		t.rings[i] = ring.New(per)
		t.waitqs[i].cond.L = &t.waitqs[i].mu
	}
	t.reg.init()
	t.errs.init()
	return t
}

// roughNsPerUnit measures the length of a trace unit over a millisecond,
// for the live view; the file gets exact calibration points instead.
func roughNsPerUnit() float64 {
	u0, n0 := clock.Now(), clock.Nanotime()
	for clock.Nanotime()-n0 < 1_000_000 {
	}
	return float64(clock.Nanotime()-n0) / float64(clock.Now()-u0)
}

func init() {
	if !Enabled {
		return
	}
	switch os.Getenv("CALLTRAIL") {
	case "off", "0":
		return
	}
	if err := start(); err != nil {
		fmt.Fprintf(os.Stderr, "calltrail: not tracing: %v\n", err)
	}
}

// minTriggerEvery bounds how often triggers write: a window a second at
// most, whatever CALLTRAIL_TRIGGER_EVERY says.
const minTriggerEvery = time.Second

// Options configure tracing started by Start or by a FlightRecorder.
// The zero Options are the defaults the environment's variables have in
// a program built with calltrail build, run or test.
type Options struct {
	// Buffer bounds the memory for calls not yet written, in bytes
	// (CALLTRAIL_BUFFER); 0 means 32 MiB. The flight recorder keeps its
	// window within it.
	Buffer int
	// Flush is how often the trace is written (CALLTRAIL_FLUSH); 0
	// means every 100ms, and more than a minute is a minute.
	Flush time.Duration
	// Drop has a goroutine whose buffer is full drop its calls, counted
	// in the trace, rather than wait for the writer (CALLTRAIL_FULL=drop).
	Drop bool
	// Paused starts with recording switched off, until Resume
	// (CALLTRAIL=paused).
	Paused bool
}

// options returns the runtime's settings for o.
func (o Options) options() options {
	in := options{buffer: defaultBuffer, every: 100 * time.Millisecond, paused: o.Paused}
	if o.Buffer > 0 {
		in.buffer = o.Buffer
	}
	if o.Flush > 0 {
		in.every = min(o.Flush, time.Minute)
	}
	if o.Drop {
		in.full = fullDrop
	}
	return in
}

// ErrStarted is Start's error when the program is traced already: by
// the environment of a program built with calltrail build, run or test,
// unless CALLTRAIL=off leaves starting to Start, or by an earlier Start.
// A process is traced once, to one trace.
var ErrStarted = errors.New("calltrail: tracing started already (once a process; CALLTRAIL=off leaves it to Start)")

// Start traces the program to w until Stop: the enter and exit of every
// call of a traced function, with its goroutine and nanosecond times, in
// the trace format package tracefile reads. Start fails with ErrStarted
// if the program is traced already. Unlike tracing started by the
// environment, it installs no signal handler and does not close w: a
// program that wants its trace complete when interrupted calls Stop
// itself. Without the calltrail build tag, Start does nothing and
// returns nil.
func Start(w io.Writer, o Options) error {
	if !Enabled {
		return nil
	}
	if w == nil {
		return errors.New("calltrail: Start with a nil writer")
	}
	return begin(o.options(), nopCloser{w}, nil, nil, false)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// starting makes Start, a FlightRecorder and the environment start
// tracing one at a time.
var starting sync.Mutex

// begin starts tracing with o, to out, the calls shown as they happen on
// text if it is not nil; with signals, completing the trace on SIGINT and
// SIGTERM.
func begin(o options, out io.WriteCloser, text io.Writer, textCloser io.Closer, signals bool) error {
	starting.Lock()
	defer starting.Unlock()
	if tr != nil {
		return ErrStarted
	}
	t, err := newTracer(o, out, text, textCloser)
	if err != nil {
		return err
	}
	use(t)
	recording.Store(!o.paused)
	if signals {
		handleSignals(t)
	}
	return nil
}

// start begins tracing the program as the environment says: the
// environment's variables read, in one place (optionsFromEnv), and handed
// to begin, as Start hands its Options.
func start() error {
	o, err := optionsFromEnv()
	if err != nil {
		return err
	}
	var f io.WriteCloser = discard{}
	if !o.flight {
		if f, err = createTrace(o.out); err != nil {
			return err
		}
	}
	var text io.Writer
	var textCloser io.Closer
	switch o.text {
	case "":
	case "stderr":
		text = os.Stderr
	case "stdout":
		text = os.Stdout
	default:
		tf, err := os.Create(o.text)
		if err != nil {
			f.Close()
			return err
		}
		text, textCloser = tf, tf
	}
	if err := begin(o, f, text, textCloser, true); err != nil {
		f.Close()
		return err
	}
	if addr := o.http; addr != "" {
		// Package live, which serves it, is initialised after this
		// package: look once the program's initialisation is likely
		// over, or when tracing ends, if sooner.
		endpointWanted.Store(&addr)
		time.AfterFunc(time.Second, checkEndpoint)
	}
	return nil
}

// endpointWanted is CALLTRAIL_HTTP's address until checkEndpoint has
// looked for the control endpoint.
var endpointWanted atomic.Pointer[string]

// checkEndpoint says, once, that the program was asked to serve the
// control endpoint but was built without it.
func checkEndpoint() {
	if addr := endpointWanted.Swap(nil); addr != nil && !endpoint.Linked.Load() {
		fmt.Fprintf(os.Stderr, "calltrail: CALLTRAIL_HTTP=%s: this program was built without the control endpoint (calltrail build --live links it): nothing serves its calls\n", *addr)
	}
}

// discard is the flight recorder's trace file: it writes none.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) Close() error                { return nil }

func (w *writer) closed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.done
}

// createTrace creates the trace file. A name ending in a separator, or
// naming a directory, gets a file per program inside it, named after the
// program: one trace per test binary of "calltrail test", named after its
// package's path in the module, so that the tests of two packages named
// util write util.test.trace and internal-util.test.trace.
func createTrace(name string) (*os.File, error) {
	if !traceout.IsDir(name) {
		return os.Create(name)
	}
	if err := os.MkdirAll(name, 0o755); err != nil {
		return nil, err
	}
	prog := filepath.Base(os.Args[0])
	if rel := modulePath(); rel != "" && strings.HasSuffix(prog, ".test") {
		// The build records a main package's tests under its own path.
		prog = strings.TrimSuffix(rel, ".test") + ".test"
	}
	names := []string{prog + ".trace"}
	for i := 2; i <= 1000; i++ {
		names = append(names, fmt.Sprintf("%s.%d.trace", prog, i))
	}
	for _, n := range names {
		f, err := os.OpenFile(filepath.Join(name, n), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if !os.IsExist(err) {
			return f, err
		}
	}
	return nil, fmt.Errorf("%s: a thousand traces of %s already", name, prog)
}

// mainPackage is the import path of the program's main package, as the
// build recorded it: example.com/m/internal/util.test for a test binary.
func mainPackage() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Path
	}
	return ""
}

// modulePath names the program after its main package's path within its
// module, with dashes for slashes: internal-util.test; empty for the
// module's root package, or when the build recorded no path.
func modulePath() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Path == "" {
		return ""
	}
	rel := bi.Path
	switch root := bi.Main.Path; {
	case root != "" && strings.HasPrefix(bi.Path, root+"/"):
		rel = bi.Path[len(root)+1:]
	case root != "" && (bi.Path == root || bi.Path == root+".test"):
		return "" // the module's root package: its name says it
	}
	return strings.ReplaceAll(rel, "/", "-")
}
