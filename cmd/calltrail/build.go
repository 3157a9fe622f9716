package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/calltrail/calltrail"
	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/instrument"
	"github.com/calltrail/calltrail/internal/gobuild"
	"github.com/calltrail/calltrail/internal/indented"
	"github.com/calltrail/calltrail/internal/text"
	"github.com/calltrail/calltrail/internal/words"
	"github.com/calltrail/calltrail/tracefile"
)

// tracedArgs are calltrail's own flags of build, run and test, taken out
// of the arguments before the rest goes to the go command.
type tracedArgs struct {
	out      string   // -o
	profiles string   // --profiles: the Go runtime's profiles to collect
	env      []string // for the program: profile rates
	pkgs     []string // --pkgs
	inlined  bool     // --inlined: trace the functions kept inlined too
	endpoint gobuild.Endpoint
	otel     bool // --otel: record the OpenTelemetry SDK's spans
	opts     instrument.Options
	goFlags  []string // flags for the go command
	packages []string // package arguments
	progArgs []string // run: the program's arguments
}

// tracedFlags registers on fs calltrail's own flags of build, run and
// test, bound to a: the help lists them and parseTraced takes them. -o
// says what it writes; runs adds the flags of a running program, links
// those of a program linked (not a test binary).
func tracedFlags(fs *flag.FlagSet, a *tracedArgs, oUsage string, runs, links bool) {
	*a = tracedArgs{}
	if runs {
		a.profiles = "cpu,mutex,block"
	}
	fs.StringVar(&a.out, "o", "", oUsage)
	fs.Func("pkgs", "trace the packages matching `PATTERNS` (space-separated, as go list takes them) instead of the main module's", func(v string) error {
		a.pkgs = append(a.pkgs, strings.Fields(v)...)
		return nil
	})
	regexpFlag := func(name, usage string, re **regexp.Regexp) {
		fs.Func(name, usage, func(v string) (err error) {
			*re, err = regexp.Compile(v)
			return err
		})
	}
	regexpFlag("funcs", "trace only functions whose qualified name matches `REGEX`", &a.opts.Funcs)
	regexpFlag("exclude", "leave out functions whose qualified name matches `REGEX`", &a.opts.Exclude)
	regexpFlag("args", "record the arguments and results of functions whose qualified name matches `REGEX`: numbers, bools, strings (32 bytes), lengths, types", &a.opts.Args)
	fs.BoolVar(&a.inlined, "inlined", false, "trace the functions kept inlined by default, whose inlining keeps a value off the heap, too, at the cost of that allocation")
	fs.BoolVar(&a.opts.Errors, "errors", true, "record the error each call of a function with an error result returns, its type and message (--errors=false to leave them out)")
	fs.BoolVar(&a.otel, "otel", true, "in a program that uses the OpenTelemetry SDK (go.opentelemetry.io/otel/sdk/trace), record the spans it starts, so that calltrail spans and --trace-id tie each call to its request (--otel=false to leave the SDK as it is)")
	if links {
		fs.Var(endpointFlag{&a.endpoint}, "live", "link the control endpoint (CALLTRAIL_HTTP; see calltrail record) into the program: by default only into one that imports net/http already; --live=false into none")
	}
	if !runs {
		fs.Var(profilesFlag{&a.profiles}, "profiles", "link the Go runtime's profiles into the program, and record them with the calls unless CALLTRAIL_PROFILES says otherwise: a `LIST` of cpu, mutex and block (by default none, and the program cannot record any)")
		return
	}
	fs.Var(profilesFlag{&a.profiles}, "profiles", "the Go runtime's profiles to record with the calls: a `LIST` of cpu, mutex and block, or none")
	envFlag := func(name, env, usage string) {
		fs.Func(name, usage, func(v string) error {
			a.env = append(a.env, env+"="+v)
			return nil
		})
	}
	envFlag("mutex-fraction", "CALLTRAIL_MUTEX_FRACTION", "record one in `N` mutex contention events (default 10)")
	envFlag("block-rate", "CALLTRAIL_BLOCK_RATE", "record a blocking event every `NS` nanoseconds spent blocked (default 10000)")
}

// endpointFlag is --live: when to link the control endpoint. Alone, it
// says yes.
type endpointFlag struct{ e *gobuild.Endpoint }

func (f endpointFlag) IsBoolFlag() bool { return true }

func (f endpointFlag) String() string {
	if f.e == nil {
		return ""
	}
	switch *f.e {
	case gobuild.EndpointOn:
		return "true"
	case gobuild.EndpointOff:
		return "false"
	}
	return "auto"
}

func (f endpointFlag) Set(v string) error {
	switch v {
	case "auto":
		*f.e = gobuild.EndpointAuto
		return nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("want true, false or auto")
	}
	*f.e = gobuild.EndpointOff
	if on {
		*f.e = gobuild.EndpointOn
	}
	return nil
}

// profilesFlag is --profiles: a list of the runtime's profiles.
type profilesFlag struct{ list *string }

func (f profilesFlag) String() string {
	if f.list == nil {
		return ""
	}
	return *f.list
}

func (f profilesFlag) Set(v string) error {
	if v == "none" {
		v = ""
	}
	for _, p := range strings.Split(v, ",") {
		if p != "" && p != "cpu" && p != "mutex" && p != "block" {
			return fmt.Errorf("want a list of cpu, mutex and block, or none")
		}
	}
	*f.list = v
	return nil
}

// parseTraced splits args into calltrail's flags, which go to fs (made
// by tracedFlags), and the go command's. For run, the first package
// argument ends the flags and the rest are the program's. It returns a
// usage error for bad calltrail flags.
func parseTraced(fs *flag.FlagSet, a *tracedArgs, args []string, isRun bool) error {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" || !strings.HasPrefix(arg, "-") || arg == "-" {
			if arg == "--" {
				i++
			}
			if isRun {
				if i < len(args) {
					a.packages = []string{args[i]}
					a.progArgs = args[i+1:]
				}
			} else {
				a.packages = append(a.packages, args[i:]...)
			}
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		needsValue := func() bool { return !hasValue && i+1 >= len(args) }
		if f := fs.Lookup(name); f != nil {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() && !hasValue {
				value = "true"
			} else if !hasValue {
				if needsValue() {
					return usageError{fmt.Sprintf("flag %s needs a value", arg)}
				}
				i++
				value = args[i]
			}
			if err := fs.Set(name, value); err != nil {
				return usageError{fmt.Sprintf("--%s %s: %v", name, value, err)}
			}
			continue
		}
		switch {
		case gobuild.TakesValue(name) && !hasValue:
			if needsValue() {
				return usageError{fmt.Sprintf("flag %s needs a value", arg)}
			}
			a.goFlags = append(a.goFlags, arg, args[i+1])
			i++
		case !gobuild.IsGoFlag(name) && nearFlag(fs, name) != "":
			// Not go's: a mistyped flag of calltrail's, which go
			// would refuse with its own usage.
			return usageError{fmt.Sprintf("flag provided but not defined: %s (did you mean --%s? %s -h lists its flags)", arg, nearFlag(fs, name), fs.Name())}
		default:
			a.goFlags = append(a.goFlags, arg)
		}
	}
	return nil
}

// nearFlag returns the flag of fs that name, a flag fs does not define,
// is one letter off, a start of or longer than: --pkg for --pkgs, --erors
// for --errors. It returns "" if none is.
func nearFlag(fs *flag.FlagSet, name string) (near string) {
	fs.VisitAll(func(f *flag.Flag) {
		if near == "" && len(name) > 1 && (strings.HasPrefix(f.Name, name) || strings.HasPrefix(name, f.Name) && len(f.Name) > 1 || oneOff(name, f.Name)) {
			near = f.Name
		}
	})
	return near
}

// oneOff reports whether a and b differ by one letter changed, added or
// left out, or two letters next to each other swapped.
func oneOff(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	switch {
	case len(b)-len(a) == 1:
		return a[i:] == b[i+1:]
	case len(a) != len(b) || i == len(a):
		return false
	}
	return a[i+1:] == b[i+1:] || i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
}

// goFlagsHelp says where the flags calltrail does not know go.
func goFlagsHelp(command string) string {
	return "Every other flag goes to " + command + " (-tags, -race, -ldflags, -gcflags, -mod, -trimpath...), which calltrail runs with an overlay of the instrumented files."
}

// prepare instruments the packages and returns the flags for the go
// command: the user's, with the overlay, the tags and the linker flag the
// exit hook needs.
func (sess *session) prepare(a tracedArgs, tests bool) (*gobuild.Build, []string, gobuild.Stats, error) {
	patterns := a.packages
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	b := &gobuild.Build{Dir: ".", Flags: a.goFlags, Patterns: patterns, Instrument: a.pkgs, Tests: tests, Options: a.opts, Runtime: calltrail.Source(), TraceInlined: a.inlined, Endpoint: a.endpoint, NoSpans: !a.otel, Profiles: a.profiles}
	if tests {
		b.Endpoint = gobuild.EndpointOff
	}
	flags, st, err := b.Prepare()
	if err != nil {
		b.Close()
		return nil, nil, st, err
	}
	if st.NoSpans != "" {
		fmt.Fprintf(sess.errOut, "calltrail: the program's OpenTelemetry spans will not be recorded: %s\n", st.NoSpans)
	}
	// A function --funcs matches is instrumented, or left out by
	// --exclude or to stay inlined: with none of those, it matched none.
	if n := st.Omitted[instrument.WhyFuncs]; a.opts.Funcs != nil && n > 0 && st.Funcs+st.Omitted[instrument.WhyExclude]+st.Omitted[instrument.WhyInlined] == 0 {
		// A pattern that matches nothing is most often a typo: the
		// build still succeeds, and its traces would explain nothing.
		fmt.Fprintf(sess.errOut, "calltrail: --funcs %s matches none of the %s of the packages traced: nothing is traced\n", a.opts.Funcs, words.Count(n, "function"))
	}
	if n := len(st.Refused); n > 0 {
		names := strings.Join(st.Refused[:min(n, 8)], ", ")
		if n > 8 {
			names += fmt.Sprintf(" and %d more", n-8)
		}
		fmt.Fprintf(sess.errOut, "calltrail: --pkgs: %d packages of the standard library left untraced, which calltrail's runtime uses or cannot trace: %s\n", n, names)
	}
	return b, flags, st, nil
}

// exitError carries the exit status of a command calltrail ran, to be
// calltrail's own.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// goCommand runs the go command with the standard streams and the
// environment a build needs, and returns its exit status as an exitError.
func (sess *session) goCommand(b *gobuild.Build, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), b.Env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, sess.out, sess.errOut
	return runForwarding(cmd)
}

// signalled is the end of a program calltrail ran that a signal killed:
// calltrail ends the same way, once it has cleaned up.
type signalled struct{ sig syscall.Signal }

func (e signalled) Error() string { return "killed by signal " + e.sig.String() }

// runForwarding runs cmd, passing on SIGINT and SIGTERM, and returns its
// exit status as an exitError, or the signal that killed it as signalled.
// Where the system can, the command is killed when calltrail is, even by
// SIGKILL, so that nothing it started outlives it.
func runForwarding(cmd *exec.Cmd) error {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	// The parent-death signal comes when the thread that started the
	// command ends: keep this goroutine on its thread until the command
	// has.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = dieWithParent()
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return signalled{ws.Signal()}
		}
		return exitError{ee.ExitCode()}
	}
	return err
}

func buildVerb() *verb {
	var a tracedArgs
	return &verb{
		name:    "build",
		args:    "[-o BIN] [--pkgs PATTERNS] [--funcs REGEX] [--exclude REGEX] [--inlined] [--args REGEX] [--errors=false] [--profiles cpu,mutex,block|none] [--live=true|false] [--otel=false] [go build flags] [PKG...]",
		summary: "build a program with every function of the main module traced; the source is not changed",
		custom:  true,
		flags: func(fs *flag.FlagSet) {
			tracedFlags(fs, &a, "write the program to `BIN` (as go build -o)", false, true)
		},
		more: goFlagsHelp("go build"),
		run: func(sess *session, fs *flag.FlagSet, args []string) error {
			if err := parseTraced(fs, &a, args, false); err != nil {
				return err
			}
			if a.out != "" {
				// The program would replace it: go build -o go.mod
				// writes a binary there.
				if err := goSource(a.out, "-o "+a.out); err != nil {
					return err
				}
			}
			b, flags, _, err := sess.prepare(a, false)
			if err != nil {
				return err
			}
			defer b.Close()
			if a.out != "" {
				flags = append(flags, "-o", a.out)
			}
			return sess.goCommand(b, append(append([]string{"build"}, flags...), a.packages...)...)
		},
	}
}

// buildProgram builds the program of calltrail run into the build
// directory and returns its path. The go command names it, as go build
// would in the user's directory, so that the trace names the program
// after its package rather than a temporary file.
func (sess *session) buildProgram(b *gobuild.Build, flags, packages []string) (string, error) {
	dir := filepath.Join(b.Work, "bin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	if err := sess.goCommand(b, append(append([]string{"build", "-o", dir + string(filepath.Separator)}, flags...), packages...)...); err != nil {
		return "", err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	if len(ents) != 1 {
		return "", fmt.Errorf("%s: not a main package", strings.Join(packages, " "))
	}
	return filepath.Join(dir, ents[0].Name()), nil
}

// programPath is how the trace names the program calltrail run built
// from pkg: the package's directory, or the file, when pkg is a path on
// this machine, else pkg as given, ending in the name of the program.
func programPath(pkg, bin string) string {
	name := filepath.Base(bin)
	files := strings.HasSuffix(pkg, ".go")
	if files {
		pkg = filepath.Dir(pkg)
	}
	if files || build.IsLocalImport(pkg) || filepath.IsAbs(pkg) {
		if abs, err := filepath.Abs(pkg); err == nil {
			pkg = abs
		}
	}
	if filepath.Base(pkg) != name {
		pkg = filepath.Join(pkg, name)
	}
	return pkg
}

// absDir returns dir as an absolute path ending in a separator, which the
// runtime takes as a directory to put one trace per program in.
func absDir(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	abs, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(dir, "/") {
		dir = abs + "/" + dir
	}
	return strings.TrimSuffix(dir, "/") + "/", nil
}

// leftOut says how many functions were left untraced, and why.
func leftOut(omitted map[instrument.Why]int) string {
	n := 0
	var whys []instrument.Why
	for why, k := range omitted {
		n += k
		whys = append(whys, why)
	}
	if n == 0 {
		return ""
	}
	slices.SortFunc(whys, func(a, b instrument.Why) int {
		return cmp.Or(cmp.Compare(omitted[b], omitted[a]), cmp.Compare(a, b))
	})
	parts := make([]string, len(whys))
	for i, why := range whys {
		parts[i] = fmt.Sprintf("%d %s", omitted[why], why)
		if why == instrument.WhyInlined {
			parts[i] += " to keep a value off the heap (--inlined traces them)"
		}
	}
	return fmt.Sprintf(", %d left out: %s", n, strings.Join(parts, ", "))
}

// noCalls says why a run recorded no call: otherwise.
func noCalls(st gobuild.Stats, otherwise string) string {
	if st.Funcs == 0 {
		return "no function was instrumented" + leftOut(st.Omitted)
	}
	return otherwise
}

// failedRun is the error of a run whose program recorded nothing: the
// program's own exit status if it failed, after saying what happened;
// else msg, for an exit status of 1.
func (sess *session) failedRun(msg string, runErr error) error {
	if runErr == nil {
		return errors.New(msg)
	}
	fmt.Fprintf(sess.errOut, "calltrail: %s\n", msg)
	return runErr
}

// summarizeRun prints what run recorded, and what to do next, reading
// the trace once, and returns the number of calls recorded, 1 when the
// trace cannot be read (said then).
func (sess *session) summarizeRun(trace string, st gobuild.Stats) uint64 {
	t, err := sess.load(trace, analysis.Options{})
	if err != nil {
		fmt.Fprintf(sess.errOut, "calltrail: %v\n", err)
		return 1
	}
	p := t.Profile
	instrumented := words.Count(st.Funcs, "function") + " instrumented in " + words.Count(st.Packages, "package") + leftOut(st.Omitted)
	if st.Funcs == 0 {
		instrumented = "no function instrumented (the program traces itself, or --pkgs chose none)" + leftOut(st.Omitted)
	}
	fmt.Fprintf(sess.errOut, "\ncalltrail: %s; recorded %s in %s over %s",
		instrumented, words.Count(t.Calls(), "call"), words.Count(p.Goroutines, "goroutine"), indented.Round(p.Duration))
	if p.Stats.DroppedCalls > 0 {
		fmt.Fprintf(sess.errOut, " (%d calls dropped)", p.Stats.DroppedCalls)
	}
	if p.Stats.Waits > 0 {
		fmt.Fprintf(sess.errOut, "; held up %s waiting for the trace writer", indented.Round(time.Duration(p.Stats.HeldNs)))
	}
	fmt.Fprintf(sess.errOut, "\n")
	text.Findings(sess.errOut, t.Findings)
	if funcs := t.Functions("self", 5); len(funcs) > 0 {
		fmt.Fprintf(sess.errOut, "calltrail: top functions by self time:\n")
		tw := tabwriter.NewWriter(sess.errOut, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "\tself\ttotal\tcalls\t\t\n")
		for _, f := range funcs {
			fmt.Fprintf(tw, "\t%s\t%s\t%d\t\t%s\n", text.Duration(f.SelfNs), text.Duration(f.TotalNs), f.Calls, f.Name)
		}
		tw.Flush()
	}
	size := int64(0)
	if info, err := os.Stat(trace); err == nil {
		size = info.Size()
	}
	fmt.Fprintf(sess.errOut, "calltrail: trace written to %s (%d bytes)", trace, size)
	if p.Err != nil {
		fmt.Fprintf(sess.errOut, "; %v", p.Err)
	}
	fmt.Fprintf(sess.errOut, "\ncalltrail: next: calltrail serve %s (the web UI), calltrail report %s, calltrail replay %s | less\n", trace, trace, trace)
	return t.Calls()
}

// listTraces says which traces calltrail test wrote into dir since
// started, and of which package each is: two packages of one name give
// their test binaries one name too.
func (sess *session) listTraces(dir string, started time.Time) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.trace"))
	var written, lines []string
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.ModTime().Before(started) {
			continue
		}
		written = append(written, f)
		line := "  " + f
		if pkg := tracePackage(f); pkg != "" {
			line += "  (" + strings.TrimSuffix(pkg, ".test") + ")"
		}
		lines = append(lines, line)
	}
	if len(written) == 0 {
		fmt.Fprintf(sess.errOut, "calltrail: no trace written in %s\n", dir)
		return
	}
	fmt.Fprintf(sess.errOut, "calltrail: %s written, of the tests of:\n%s\ncalltrail: next: calltrail report %s\n",
		words.Count(uint64(len(written)), "trace"), strings.Join(lines, "\n"), written[0])
}

// tracePackage reads the main package a trace's program was built from.
func tracePackage(path string) string {
	f, err := tracefile.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	return f.Meta().Package
}
