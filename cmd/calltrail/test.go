package main

import (
	"flag"
	"os"
	"strings"
	"time"

	"github.com/calltrail/calltrail/internal/traceout"
)

func testVerb() *verb {
	var a tracedArgs
	return &verb{
		name:    "test",
		args:    "[-o DIR] [--pkgs PATTERN] [--funcs REGEX] [--exclude REGEX] [--inlined] [--errors] [--profiles cpu,mutex,block|none] [--mutex-fraction N] [--block-rate NS] [go test flags] [PKG...]",
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
			b, flags, _, err := sess.prepare(a, true)
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
			err = sess.goCommand(b, append(append([]string{"test"}, flags...), a.packages...)...)
			sess.listTraces(dir, started)
			return err
		},
	}
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
