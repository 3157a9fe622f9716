package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/gobuild"
)

// A verb is one subcommand.
type verb struct {
	name    string
	args    string
	summary string
	run     func(sess *session, fs *flag.FlagSet, args []string) error
	flags   func(fs *flag.FlagSet)
	// custom verbs take their arguments unparsed: they pass most of
	// them on to the go command. Their flags are registered for the help
	// alone.
	custom bool
	// live verbs write as they go, to be read as they go (a server's
	// address): their output is not buffered.
	live bool
	more string // said after the flags in the help
}

// commands are calltrail's verbs, each defined in the file named after
// it.
func commands() []*verb {
	return []*verb{
		// Tracing a program.
		buildVerb(), runVerb(), testVerb(), instrumentVerb(),
		// Reading a trace.
		infoVerb(), replayVerb(), reportVerb(), chainsVerb(), goroutinesVerb(), spansVerb(),
		flameVerb(), exportVerb(), diffVerb(), serveVerb(),
		// Leaving it on.
		recordVerb(), topVerb(),
		// The store.
		pushVerb(), collectVerb(),
		versionVerb(),
	}
}

var (
	verbList = commands()
	// verbs are the commands by name.
	verbs = func() map[string]*verb {
		m := map[string]*verb{}
		for _, v := range verbList {
			m[v.name] = v
		}
		return m
	}()
)

// usageError is an error in how calltrail was called.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	// calltrail build runs calltrail again as the compiler's wrapper.
	gobuild.ServeReportCompile()
	sess := &session{out: os.Stdout, errOut: os.Stderr, outTerminal: isTerminal(os.Stdout)}
	code := sess.run(os.Args[1:])
	if sess.dieBy != 0 {
		reraise(sess.dieBy)
	}
	os.Exit(code)
}

// A session is one run of calltrail: where its verb writes, and what the
// verb learned on the way that the end of the run reports.
type session struct {
	out, errOut io.Writer
	// outTerminal says out is a terminal, to which no verb writes
	// binary output.
	outTerminal bool

	// damage is the damage met reading a trace (see tracefile.Health),
	// told when the verb is done: it shows what came before it first.
	damage error
	// goroutines is the filter of a verb given -g, asked when the verb
	// is done whether the goroutine was there at all.
	goroutines *filter.Filter
	// dieBy is the signal that killed a program calltrail ran:
	// calltrail, having cleaned up and said what it has to, ends by the
	// same signal.
	dieBy syscall.Signal
}

// run runs calltrail with args, writing to stdout and stderr, and
// returns its exit code.
func run(args []string, stdout, stderr io.Writer) int {
	return (&session{out: stdout, errOut: stderr}).run(args)
}

func (sess *session) run(args []string) (code int) {
	stdout, stderr := sess.out, sess.errOut
	defer func() {
		// A bug must not show as a Go panic trace: one line says what
		// happened, unless CALLTRAIL_DEBUG asks for the whole story.
		if p := recover(); p != nil {
			if os.Getenv("CALLTRAIL_DEBUG") != "" {
				panic(p)
			}
			fmt.Fprintf(stderr, "calltrail: internal error: %s (please report it, with the command; CALLTRAIL_DEBUG=1 shows where)\n", oneLine(fmt.Sprint(p)))
			code = 1
		}
	}()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" && len(args) == 1 {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "-version" || args[0] == "--version" {
		args[0] = "version"
	}
	name := args[0]
	if name == "help" {
		name = args[1]
		args = []string{name, "-h"}
	}
	v, ok := verbs[name]
	if !ok {
		fmt.Fprintf(stderr, "calltrail: unknown command %q; run \"calltrail help\" for the list\n", name)
		return 2
	}
	fs := flag.NewFlagSet("calltrail "+v.name, flag.ContinueOnError)
	// A mistaken flag is said in one line (below), -h gets the usage.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	usage := func() {
		fs.SetOutput(stderr)
		fmt.Fprintf(stderr, "usage: calltrail %s %s\n\n%s\n", v.name, v.args, v.summary)
		if hasFlags(fs) {
			fmt.Fprintf(stderr, "\nflags:\n")
			fs.PrintDefaults()
		}
		if v.more != "" {
			fmt.Fprintf(stderr, "\n%s\n", v.more)
		}
	}
	if v.flags != nil {
		v.flags(fs)
	}
	rest := args[1:]
	if v.custom {
		if len(rest) > 0 && (rest[0] == "-h" || rest[0] == "-help" || rest[0] == "--help") {
			usage()
			return 0
		}
	} else {
		var err error
		if rest, err = parseInterspersed(fs, rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage()
				return 0
			}
			hint := ""
			if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
				if near := nearFlag(fs, name); near != "" {
					hint = "did you mean --" + near + "? "
				}
			}
			fmt.Fprintf(stderr, "calltrail %s: %v (%scalltrail %s -h lists its flags)\n", v.name, err, hint, v.name)
			return 2
		}
	}
	var bw *bufio.Writer
	if !v.custom && !v.live {
		// A report of a million functions is a million lines: one
		// write each would cost more than the analysis.
		bw = bufio.NewWriterSize(stdout, 64<<10)
		sess.out = bw
		defer bw.Flush()
	}
	err := v.run(sess, fs, rest)
	if bw != nil {
		// What was written goes before any error message; an output
		// that could not be written (a full disk) is the verb's
		// failure, whichever verb wrote it.
		if ferr := bw.Flush(); ferr != nil && err == nil {
			err = ferr
		}
	}
	if err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		var se signalled
		if errors.As(err, &se) {
			sess.dieBy = se.sig
			return 128 + int(se.sig)
		}
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "calltrail %s: %s\n", v.name, ue.msg)
			return 2
		}
		msg := err.Error()
		if sess.damage != nil {
			// What was missing may be missing for the damage: say both.
			msg += "; " + sess.damage.Error()
		}
		fmt.Fprintf(stderr, "calltrail: %s\n", oneLine(msg))
		return 1
	}
	if sess.damage != nil {
		fmt.Fprintf(stderr, "calltrail: %s\n", oneLine(sess.damage.Error()))
		return 1
	}
	if err := sess.unseen(); err != nil {
		fmt.Fprintf(stderr, "calltrail: %s\n", err)
		return 1
	}
	return 0
}

// unseen is the error of a -g naming a goroutine in which no call read
// ran: a verb says it rather than show an empty view, and one writing a
// file writes none.
func (sess *session) unseen() error {
	if g := sess.goroutines; g != nil && g.Unseen() {
		return fmt.Errorf("-g %d: no traced call ran in goroutine %d (calltrail replay shows the goroutine of each call, as g[ID])", g.G, g.G)
	}
	return nil
}

// parseInterspersed parses flags wherever they are among the arguments,
// as the go command does: "calltrail report t.out --top 5" is
// "calltrail report --top 5 t.out". An argument "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ")
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "calltrail records every function call of a Go program and analyses the trace.\n\nusage: calltrail COMMAND [flags] [args]\n\ncommands:\n")
	for _, v := range verbList {
		fmt.Fprintf(w, "  %-10s %s\n", v.name, v.summary)
	}
	fmt.Fprintf(w, "\nRun \"calltrail help COMMAND\" for a command's flags. FILE defaults to calltrail.out.\n")
}
