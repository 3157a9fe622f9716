package main

import (
	"flag"
	"os"
	"strings"
	"time"

	"github.com/calltrail/calltrail/internal/gobuild"
	"github.com/calltrail/calltrail/internal/traceout"
)

func testVerb() *verb {
	var a tracedArgs
	return &verb{
		name:    "test",
		args:    "[-o DIR] [--pkgs PATTERNS] [--funcs REGEX] [--exclude REGEX] [--inlined] [--args REGEX] [--errors=false] [--profiles cpu,mutex,block|none] [--mutex-fraction N] [--block-rate NS] [--otel=false] [go test flags] [PKG...]",
		summary: "run tests with every function traced, writing one trace per test binary",
		custom:  true,
		flags: func(fs *flag.FlagSet) {
			tracedFlags(fs, &a, "write one trace per test binary into `DIR`, named after it (default: $CALLTRAIL_OUT if it names a directory, else calltrail-traces)", true, false)
		},
		more: goFlagsHelp("go test") + " Flags after the packages go to the test binaries, as with go test. The tests run each time (-count=1) unless -count is given: go test's cache writes no trace. The main module's packages the tests import are traced too.",
		run: func(sess *session, fs *flag.FlagSet, args []string) error {
			if err := parseTraced(fs, &a, args, false); err != nil {
				return err
			}
			// -o, else CALLTRAIL_OUT if it names a directory, as a
			// traced test binary takes it, else calltrail-traces: a
			// trace per test binary, named after it.
			dir := a.out
			if env := os.Getenv("CALLTRAIL_OUT"); dir == "" && env != "" && traceout.IsDir(env) {
				dir = env
			}
			if dir == "" {
				dir = "calltrail-traces"
			}
			// The flags after the packages go to go test as they
			// came, but those that choose what is built, which
			// calltrail must see too and with which it merges its
			// own (-tags): go test takes them before the packages.
			prep := a
			var tail []string
			prep.packages, prep.goFlags, tail = splitTestArgs(a.packages)
			prep.goFlags = append(append([]string(nil), a.goFlags...), prep.goFlags...)
			b, flags, _, err := sess.prepare(prep, true)
			if err != nil {
				return err
			}
			defer b.Close()
			abs, err := absDir(dir)
			if err != nil {
				return err
			}
			// For the test binaries, which inherit the go command's
			// environment; calltrail's own stays as it was.
			b.Env = append(append(b.Env, "CALLTRAIL_OUT="+abs, "CALLTRAIL_PROFILES="+a.profiles), a.env...)
			// A result from go test's cache runs nothing and writes no
			// trace: the tests run again unless -count says otherwise.
			if !hasCount(a.goFlags) && !hasCount(a.packages) {
				flags = append(flags, "-count=1")
			}
			started := time.Now()
			err = sess.goCommand(b, append(append(append([]string{"test"}, flags...), prep.packages...), tail...)...)
			sess.listTraces(dir, started)
			return err
		},
	}
}

// splitTestArgs splits the arguments of calltrail test that follow its
// flags into the packages, the leading arguments that are not flags; the
// go command's flags after them that choose what is built (-tags, -race,
// -gcflags...), with their values; and the rest, for go test and the
// test binaries: go test's flags, and everything from -args on.
func splitTestArgs(args []string) (packages, building, tail []string) {
	i := 0
	for i < len(args) && !strings.HasPrefix(args[i], "-") {
		i++
	}
	packages = args[:i]
	for rest := args[i:]; len(rest) > 0; rest = rest[1:] {
		arg := rest[0]
		if arg == "-args" || arg == "--args" {
			return packages, building, append(tail, rest...)
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if !strings.HasPrefix(arg, "-") || !gobuild.Selects(name) {
			tail = append(tail, arg)
			if strings.HasPrefix(arg, "-") && !hasValue && gobuild.TakesValue(name) && len(rest) > 1 {
				tail, rest = append(tail, rest[1]), rest[1:] // its value, which may look like a flag
			}
			continue
		}
		building = append(building, arg)
		if !hasValue && gobuild.TakesValue(name) && len(rest) > 1 {
			building, rest = append(building, rest[1]), rest[1:]
		}
	}
	return packages, building, tail
}

// hasCount reports whether args set go test's -count, the flag that
// decides whether a cached result may stand for a run.
func hasCount(args []string) bool {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "count" || name == "test.count") {
			return true
		}
	}
	return false
}
