package main

import (
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
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/calltrail/calltrail"
	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/instrument"
	"github.com/calltrail/calltrail/internal/indented"
)

// tracedArgs are calltrail's own flags of build, run and test, taken out
// of the arguments before the rest goes to the go command.
type tracedArgs struct {
	out      string   // -o
	profiles string   // --profiles: the Go runtime's profiles to collect
	env      []string // for the program: profile rates
	pkgs     []string // --pkgs
	inlined  bool     // --inlined: trace functions the compiler inlines too
	opts     instrument.Options
	goFlags  []string // flags for the go command
	packages []string // package arguments
	progArgs []string // run: the program's arguments
}

// parseTraced splits args. For run, the first package argument ends the
// flags and the rest are the program's. It returns a usage error for bad
// calltrail flags.
func parseTraced(args []string, isRun bool) (tracedArgs, error) {
	a := tracedArgs{profiles: "cpu,mutex,block"}
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
		takeValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", usageError{fmt.Sprintf("flag %s needs a value", arg)}
			}
			i++
			return args[i], nil
		}
		switch name {
		case "inlined":
			a.inlined = true
			if hasValue {
				b, err := strconv.ParseBool(value)
				if err != nil {
					return a, usageError{fmt.Sprintf("--inlined=%s: want true or false", value)}
				}
				a.inlined = b
			}
		case "profiles", "mutex-fraction", "block-rate":
			v, err := takeValue()
			if err != nil {
				return a, err
			}
			switch name {
			case "profiles":
				if v == "none" {
					v = ""
				}
				for _, p := range strings.Split(v, ",") {
					if p != "" && p != "cpu" && p != "mutex" && p != "block" {
						return a, usageError{fmt.Sprintf("--profiles %q: want a list of cpu, mutex and block, or none", v)}
					}
				}
				a.profiles = v
			case "mutex-fraction":
				a.env = append(a.env, "CALLTRAIL_MUTEX_FRACTION="+v)
			case "block-rate":
				a.env = append(a.env, "CALLTRAIL_BLOCK_RATE="+v)
			}
		case "o", "pkgs", "funcs", "exclude":
			v, err := takeValue()
			if err != nil {
				return a, err
			}
			switch name {
			case "o":
				a.out = v
			case "pkgs":
				a.pkgs = append(a.pkgs, strings.Fields(v)...)
			case "funcs", "exclude":
				re, err := regexp.Compile(v)
				if err != nil {
					return a, usageError{fmt.Sprintf("--%s: %v", name, err)}
				}
				if name == "funcs" {
					a.opts.Funcs = re
				} else {
					a.opts.Exclude = re
				}
			}
		default:
			if instrument.TakesValue(name) && !hasValue {
				if i+1 >= len(args) {
					return a, usageError{fmt.Sprintf("flag %s needs a value", arg)}
				}
				a.goFlags = append(a.goFlags, arg, args[i+1])
				i++
			} else {
				a.goFlags = append(a.goFlags, arg)
			}
		}
	}
	return a, nil
}

// tracedHelp registers, for the help alone, the flags parseTraced takes:
// -o with its meaning, and those of the running program when it runs.
func tracedHelp(fs *flag.FlagSet, o, oUsage string, runs bool) {
	fs.String("o", "", oUsage)
	fs.String("pkgs", "", "trace the packages matching `PATTERNS` (space-separated, as go list takes them) instead of the main module's")
	fs.String("funcs", "", "trace only functions whose qualified name matches `REGEX`")
	fs.String("exclude", "", "leave out functions whose qualified name matches `REGEX`")
	fs.Bool("inlined", false, "trace the functions the compiler inlines too, at the cost of their inlining")
	if runs {
		fs.String("profiles", "cpu,mutex,block", "the Go runtime's profiles to record with the calls: a `LIST` of cpu, mutex and block, or none")
		fs.Int("mutex-fraction", 0, "record one in `N` mutex contention events (default 10)")
		fs.Int("block-rate", 0, "record a blocking event every `NS` nanoseconds spent blocked (default 10000)")
	}
}

// goFlagsHelp says where the flags calltrail does not know go.
func goFlagsHelp(command string) string {
	return "Every other flag goes to " + command + " (-tags, -race, -ldflags, -gcflags, -mod, -trimpath...), which calltrail runs with an overlay of the instrumented files."
}

// prepare instruments the packages and returns the flags for the go
// command: the user's, with the overlay, the tags and the linker flag the
// exit hook needs.
func prepare(a tracedArgs, tests bool) (*instrument.Build, []string, instrument.Stats, error) {
	patterns := a.packages
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	b := &instrument.Build{Dir: ".", Flags: a.goFlags, Patterns: patterns, Instrument: a.pkgs, Tests: tests, Options: a.opts, Runtime: calltrail.Source(), TraceInlined: a.inlined}
	flags, st, err := b.Prepare()
	if err != nil {
		b.Close()
		return nil, nil, st, err
	}
	return b, flags, st, nil
}

// exitError carries the exit status of a command calltrail ran, to be
// calltrail's own.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// goCommand runs the go command with the standard streams and the
// environment a build needs, and returns its exit status as an exitError.
func goCommand(b *instrument.Build, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), b.Env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, out, errOut
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

func init() {
	register(&verb{
		name:    "build",
		args:    "[-o BIN] [--pkgs PATTERN] [--funcs REGEX] [--exclude REGEX] [--inlined] [go build flags] [PKG...]",
		summary: "build a program with every function of the main module traced; the source is not changed",
		custom:  true,
		flags:   func(fs *flag.FlagSet) { tracedHelp(fs, "BIN", "write the program to `BIN` (as go build -o)", false) },
		more:    goFlagsHelp("go build"),
		run: func(_ *flag.FlagSet, args []string) error {
			a, err := parseTraced(args, false)
			if err != nil {
				return err
			}
			b, flags, _, err := prepare(a, false)
			if err != nil {
				return err
			}
			defer b.Close()
			if a.out != "" {
				flags = append(flags, "-o", a.out)
			}
			return goCommand(b, append(append([]string{"build"}, flags...), a.packages...)...)
		},
	})
	register(&verb{
		name:    "run",
		args:    "[-o TRACE] [--pkgs PATTERN] [--funcs REGEX] [--exclude REGEX] [--inlined] [--profiles cpu,mutex,block|none] [--mutex-fraction N] [--block-rate NS] [go build flags] PKG [ARGS...]",
		summary: "build and run a program with every function traced, then summarise the trace",
		custom:  true,
		flags:   func(fs *flag.FlagSet) { tracedHelp(fs, "TRACE", "write the trace to `TRACE`", true) },
		more:    goFlagsHelp("go build") + " The first argument that is not a flag names the package; the arguments after it are the program's.",
		run: func(_ *flag.FlagSet, args []string) error {
			a, err := parseTraced(args, true)
			if err != nil {
				return err
			}
			if len(a.packages) == 0 {
				return usageError{"name the package to run, e.g. calltrail run ."}
			}
			trace := a.out
			if trace == "" {
				trace = "calltrail.out"
			}
			// A trace that cannot be written is said now, not after
			// the program ran untraced.
			if err := writable(trace); err != nil {
				return err
			}
			b, flags, st, err := prepare(a, false)
			if err != nil {
				return err
			}
			defer b.Close()
			bin, err := buildProgram(b, flags, a.packages)
			if err != nil {
				return err
			}
			cmd := exec.Command(bin, a.progArgs...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, out, errOut
			cmd.Env = append(append(os.Environ(), "CALLTRAIL_OUT="+trace, "CALLTRAIL_PROFILES="+a.profiles, "CALLTRAIL_PROGRAM="+programPath(a.packages[0], bin)), a.env...)
			before, _ := os.Stat(trace)
			runErr := runForwarding(cmd)
			if after, err := os.Stat(trace); err != nil || before != nil && os.SameFile(before, after) && before.ModTime().Equal(after.ModTime()) && before.Size() == after.Size() {
				fmt.Fprintf(errOut, "calltrail: %s: the program wrote no trace (it ended before tracing started, or is not the program built)\n", trace)
			} else {
				summarizeRun(trace, st)
			}
			return runErr
		},
	})
	register(&verb{
		name:    "test",
		args:    "[-o DIR] [--pkgs PATTERN] [--funcs REGEX] [--exclude REGEX] [--inlined] [--profiles cpu,mutex,block|none] [--mutex-fraction N] [--block-rate NS] [go test flags] [PKG...]",
		summary: "run tests with every function traced, writing one trace per test binary",
		custom:  true,
		flags: func(fs *flag.FlagSet) {
			tracedHelp(fs, "DIR", "write one trace per test binary into `DIR`, named after it", true)
		},
		more: goFlagsHelp("go test") + " Flags after the packages go to the test binaries, as with go test.",
		run: func(_ *flag.FlagSet, args []string) error {
			a, err := parseTraced(args, false)
			if err != nil {
				return err
			}
			dir := a.out
			if dir == "" {
				dir = "calltrail-traces"
			}
			b, flags, _, err := prepare(a, true)
			if err != nil {
				return err
			}
			defer b.Close()
			abs, err := absDir(dir)
			if err != nil {
				return err
			}
			os.Setenv("CALLTRAIL_OUT", abs)
			os.Setenv("CALLTRAIL_PROFILES", a.profiles)
			for _, kv := range a.env {
				k, v, _ := strings.Cut(kv, "=")
				os.Setenv(k, v)
			}
			err = goCommand(b, append(append([]string{"test"}, flags...), a.packages...)...)
			fmt.Fprintf(errOut, "calltrail: traces in %s; read one with: calltrail replay %s/PKG.test.trace\n", dir, dir)
			return err
		},
	})
}

// buildProgram builds the program of calltrail run into the build
// directory and returns its path. The go command names it, as go build
// would in the user's directory, so that the trace names the program
// after its package rather than a temporary file.
func buildProgram(b *instrument.Build, flags, packages []string) (string, error) {
	dir := filepath.Join(b.Work, "bin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	if err := goCommand(b, append(append([]string{"build", "-o", dir + string(filepath.Separator)}, flags...), packages...)...); err != nil {
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

// summarizeRun prints what run recorded, and what to do next, reading
// the trace once.
func summarizeRun(trace string, st instrument.Stats) {
	t, err := load(trace, analysis.Options{})
	if err != nil {
		fmt.Fprintf(errOut, "calltrail: %v\n", err)
		return
	}
	p := t.Profile
	instrumented := fmt.Sprintf("%d functions instrumented in %d packages", st.Funcs, st.Packages)
	if st.Inlined > 0 {
		instrumented += fmt.Sprintf(" (%d more left to the compiler's inliner: --inlined traces them)", st.Inlined)
	}
	if st.Funcs == 0 {
		instrumented = "no function instrumented (the program traces itself, or --pkgs chose none)"
	}
	fmt.Fprintf(errOut, "\ncalltrail: %s; recorded %d calls in %d goroutines over %s",
		instrumented, t.Calls(), p.Goroutines, indented.Round(p.Duration))
	if p.Stats.DroppedCalls > 0 {
		fmt.Fprintf(errOut, " (%d calls dropped)", p.Stats.DroppedCalls)
	}
	if p.Stats.Waits > 0 {
		fmt.Fprintf(errOut, "; held up %s waiting for the trace writer", indented.Round(time.Duration(p.Stats.HeldNs)))
	}
	fmt.Fprintf(errOut, "\n")
	writeFindings(errOut, t.Findings)
	if funcs := t.Functions("self", 5); len(funcs) > 0 {
		fmt.Fprintf(errOut, "calltrail: top functions by self time:\n")
		tw := tabwriter.NewWriter(errOut, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "\tself\ttotal\tcalls\t\t\n")
		for _, f := range funcs {
			fmt.Fprintf(tw, "\t%s\t%s\t%d\t\t%s\n", dur(f.SelfNs), dur(f.TotalNs), f.Calls, f.Name)
		}
		tw.Flush()
	}
	size := int64(0)
	if info, err := os.Stat(trace); err == nil {
		size = info.Size()
	}
	fmt.Fprintf(errOut, "calltrail: trace written to %s (%d bytes)", trace, size)
	if p.Err != nil {
		fmt.Fprintf(errOut, "; %v", p.Err)
	}
	fmt.Fprintf(errOut, "\ncalltrail: next: calltrail serve %s (the web UI), calltrail report %s, calltrail replay %s | less\n", trace, trace, trace)
}
