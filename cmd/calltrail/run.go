package main

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"os/exec"

	"github.com/calltrail/calltrail/internal/traceout"
)

func runVerb() *verb {
	var a tracedArgs
	return &verb{
		name:    "run",
		args:    "[-o TRACE] [--pkgs PATTERNS] [--funcs REGEX] [--exclude REGEX] [--inlined] [--args REGEX] [--errors=false] [--profiles cpu,mutex,block|none] [--mutex-fraction N] [--block-rate NS] [--live=true|false] [--otel=false] [go build flags] PKG [ARGS...]",
		summary: "build and run a program with every function traced, then summarise the trace",
		custom:  true,
		flags: func(fs *flag.FlagSet) {
			tracedFlags(fs, &a, "write the trace to `TRACE` (default: $CALLTRAIL_OUT, else calltrail.out)", true, true)
		},
		more: goFlagsHelp("go build") + " The first argument that is not a flag names the package; the arguments after it are the program's.",
		run: func(sess *session, fs *flag.FlagSet, args []string) error {
			if err := parseTraced(fs, &a, args, true); err != nil {
				return err
			}
			if len(a.packages) == 0 {
				return usageError{"name the package to run, e.g. calltrail run ."}
			}
			// As the traced program would take it, and the verbs
			// after it: -o, else CALLTRAIL_OUT, else calltrail.out.
			trace := cmp.Or(a.out, os.Getenv("CALLTRAIL_OUT"), "calltrail.out")
			named := "-o " + trace
			if a.out == "" && os.Getenv("CALLTRAIL_OUT") != "" {
				named = "CALLTRAIL_OUT=" + trace
				if traceout.IsDir(trace) {
					// Which the program takes as a directory to
					// name its trace in.
					return usageError{named + " names a directory: calltrail run writes one trace; name it with -o"}
				}
			}
			// A trace that cannot be written is said now, not after
			// the program ran untraced.
			if err := writable(trace, named); err != nil {
				return err
			}
			if err := replaceable(trace, named); err != nil {
				return err
			}
			b, flags, st, err := sess.prepare(a, false)
			if err != nil {
				return err
			}
			defer b.Close()
			bin, err := sess.buildProgram(b, flags, a.packages)
			if err != nil {
				return err
			}
			cmd := exec.Command(bin, a.progArgs...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, sess.out, sess.errOut
			cmd.Env = append(append(os.Environ(), "CALLTRAIL_OUT="+trace, "CALLTRAIL_PROFILES="+a.profiles, "CALLTRAIL_PROGRAM="+programPath(a.packages[0], bin)), a.env...)
			before, _ := os.Stat(trace)
			runErr := runForwarding(cmd)
			if after, err := os.Stat(trace); err != nil || before != nil && os.SameFile(before, after) && before.ModTime().Equal(after.ModTime()) && before.Size() == after.Size() {
				msg := fmt.Sprintf("%s: the program wrote no trace (%s)", trace, noCalls(st, "it ended before tracing started, or is not the program built"))
				if err == nil && after.Mode().IsRegular() && os.Remove(trace) == nil {
					msg += "; the previous trace there is removed, so that no verb reads it as this run's"
				}
				return sess.failedRun(msg, runErr)
			}
			if sess.summarizeRun(trace, st) == 0 {
				return sess.failedRun(fmt.Sprintf("%s: the program recorded no call (%s)", trace, noCalls(st, "none of the functions instrumented was called")), runErr)
			}
			return runErr
		},
	}
}
