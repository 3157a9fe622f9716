package gobuild

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/calltrail/calltrail/instrument"
)

// InlineQuery asks the compiler which functions of some packages it
// inlines.
type InlineQuery struct {
	Dir   string   // where the go command runs
	Env   []string // extra environment for the go command (GOWORK)
	Flags []string // build flags: those that choose files (-tags, -mod, -modfile, -pgo...) and -gcflags
	// Packages are the import paths of the packages whose functions are
	// asked about; Importers more packages built with them, whose calls
	// of those functions may be inlined too (the packages named on the
	// command line).
	Packages, Importers []string
	// Files are the .go files named on the command line, when the
	// package asked about is made of them (command-line-arguments): the
	// go command takes them instead of a package's path.
	Files   []string
	Tests   bool   // with their test files
	Overlay string // an overlay file for the go command, or ""
	// KeepGoing leaves a package that does not build to the build to
	// report, as go test reports it and tests the others: the compiler
	// reports nothing of it. Otherwise it is an error.
	KeepGoing bool
	// Commands are the main packages among Packages and Importers:
	// nothing imports them, and their report is compiled to its end
	// rather than stand on a plain compile (see ServeReportCompile).
	Commands []string
}

// targets are the go command's arguments naming what q asks about.
func (q InlineQuery) targets() []string {
	if len(q.Files) > 0 {
		return q.Files
	}
	return append(append([]string(nil), q.Packages...), q.Importers...)
}

// listArgs returns the arguments of a go list -export of q's packages
// with the user's flags and gcflags, and more: the report's, and the
// plain compiles the report's stand on (plainExports), which are to be
// the same compiles but for the report's flags.
func (q InlineQuery) listArgs(more, flags, gcflags []string) []string {
	args := append([]string{"list", "-export"}, more...)
	if q.Tests {
		args = append(args, "-test")
	}
	if q.KeepGoing {
		args = append(args, "-e")
	}
	args = append(args, flags...)
	for _, g := range gcflags {
		args = append(args, "-gcflags="+g)
	}
	return args
}

// KeepInlined returns the functions of q.Packages that are better left
// untraced, so that the compiler keeps inlining them, each with the
// compiler's line that says why.
//
// Tracing a function stops its inlining, and with it the escape analysis
// that may have kept a value it allocates on its caller's stack: New
// returning &d from an inlined NewWithSeed leaves d on the caller's
// stack; called, d moves to the heap. A function that allocates nothing
// on the heap in its body loses nothing when called instead of inlined,
// because escape analysis carries what parameters do across calls. So a
// function is kept inlined when the compiler inlines at least one of its
// calls and reports, within its body, a value moved or escaping to the
// heap. The compiler reports what it inlined at the outermost call, so a
// callee's escape inlined into F counts as F's, and F is kept too. A
// recursive function is never kept: past its first level its calls are
// real calls, which only tracing shows.
//
// It compiles the packages as the build would, with -m added to their
// compiler flags, through go list -export: the go command caches the
// result, and replays the compiler's report when nothing has changed.
func KeepInlined(q InlineQuery) (map[instrument.Pos]string, error) {
	return keepInlined(q, reportFlags)
}

// keepInlined is KeepInlined, compiling the packages asked about with
// compiler flags flags.
func keepInlined(q InlineQuery, flags string) (map[instrument.Pos]string, error) {
	asked := flags
	dir, err := filepath.Abs(q.Dir)
	if err != nil {
		return nil, err
	}
	user := parseGoFlags(q.Flags)
	gcflags, rest := values(user, "gcflags"), flagArgs(without(user, "gcflags"))
	probed := append(append([]string(nil), q.Packages...), q.Importers...)
	userFlags, err := gcflagsFor(dir, q.Env, rest, gcflags, probed, q.Importers)
	if err != nil {
		return nil, err
	}
	args := q.listArgs([]string{"-f", "{{.Name}}\t{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \"\\t\"}}\t{{join .CgoFiles \"\\t\"}}"}, rest, gcflags)
	env := append(os.Environ(), q.Env...)
	// The compiles end with their front end when this program can be
	// their wrapper and the packages' plain compiles are at hand: listed
	// beside them, found in the cache most often before any compile's
	// back end starts. (Not through an overlay or of files named: the
	// compiles are not the plain ones'. Without them, as for a package
	// that does not build, the compiles run to their end.)
	self, _ := os.Executable()
	if canWrap && quoteArg(self) != "" && q.Overlay == "" && len(q.Files) == 0 && len(q.libraries()) > 0 {
		if f, err := os.CreateTemp("", "calltrail-exports-*.json"); err == nil {
			f.Close()
			exports := f.Name()
			listed := make(chan struct{})
			go func() {
				defer close(listed)
				plainExports(dir, q, rest, gcflags, exports)
			}()
			defer func() {
				<-listed
				os.Remove(exports)
				os.Remove(exports + ".tmp") // if it could not be renamed
			}()
			args = append(args, "-toolexec="+quoteArg(self))
			// The wrapper, a program that may be traced itself
			// (calltrail's tests, built with its tag), writes no
			// trace where the compiles run.
			env = append(env, exportsEnv+"="+exports, "CALLTRAIL=off")
			flags += " " + backEndFlag
		}
	}
	seen := map[string]bool{}
	for _, p := range probed {
		if !seen[p] {
			seen[p] = true
			args = append(args, "-gcflags="+p+"="+strings.TrimSpace(userFlags[p]+" "+flags))
		}
	}
	if q.Overlay != "" {
		args = append(args, "-overlay="+q.Overlay)
	}
	args = append(append(args, "--"), q.targets()...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// (With KeepGoing, a refusal fails the compiles, not the command.)
	if asked == reportFlags && bytes.Contains(stderr.Bytes(), []byte(requiredPass)) {
		return keepInlined(q, "-m -dwarf=false -B")
	}
	if err != nil {
		// The report is mixed with the errors: ask again without -m.
		plain := exec.Command("go", append(q.listArgs([]string{"-f", "{{.ImportPath}}"}, rest, gcflags), append([]string{"--"}, q.targets()...)...)...)
		plain.Dir, plain.Env = dir, cmd.Env
		var perr bytes.Buffer
		plain.Stderr = &perr
		msg := stderr.Bytes()
		if plain.Run() != nil {
			msg = perr.Bytes()
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(string(msg)), "\n") {
			if !strings.HasPrefix(l, "# ") {
				lines = append(lines, l)
			}
		}
		return nil, fmt.Errorf("the compiler cannot say what it inlines in packages that do not build: %s", strings.Join(lines, "; "))
	}
	names := map[string]string{}   // import path -> package name
	dirs := map[string]string{}    // import path -> directory
	files := map[string][]string{} // directory and package name -> the files the build compiles
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) < 3 {
			continue
		}
		name, path, pdir := fields[0], basePath(fields[1]), fields[2]
		names[path], dirs[path] = name, pdir
		key := pdir + "\x00" + name
		for _, f := range fields[3:] {
			if f != "" && !slices.Contains(files[key], f) {
				files[key] = append(files[key], f)
			}
		}
	}
	r := parseInlining(dir, dirs, stderr.Bytes())
	return r.keep(r.inlined(names), readOverlay(q.Overlay), files)
}

// reportFlags are the compiler flags of the packages asked about: -m for
// the report, and more that spare the compiler work whose output the
// build throws away (the compile is only for its report: the build
// compiles the packages again, instrumented): the debugging information,
// the bounds checks, and the SSA passes that only optimize (sparedPasses).
// All act after inlining and escape analysis, and leave the report as it
// was. On gojq's largest package, the first two took a sixth off the
// compile, the passes another eighth (1.21s to 1.07s).
const reportFlags = "-m -dwarf=false -B -d=ssa/~^(" + sparedPasses + ")$/off"

// sparedPasses are the SSA passes reportFlags turn off: a regular
// expression over their names, spaces written as underscores. Each has
// been optional since Go 1.22, the oldest go command calltrail builds
// with; one the compiler does not know matches nothing. A compiler that
// requires one of them refuses the flag (requiredPass), and the report
// is compiled again without it.
const sparedPasses = "early_deadcode|short_circuit|pre-opt_deadcode|generic_cse|phiopt|nilcheckelim|prove|early_fuse|branchelim|dead_auto_elim|sccp|late_fuse|check_bce|dse|memcombine|lowered_deadcode_for_cse|lowered_cse|elim_unread_autos|late_deadcode|phi_tighten|likelyadjust|late_nilcheck|loop_rotate|trim"

// requiredPass is how the compiler refuses to turn off a pass it needs.
const requiredPass = "Cannot disable required SSA phase"

// inlineReport is what the compiler said, per package.
type inlineReport struct {
	decls map[string]map[instrument.Pos]string   // import path -> inlinable functions: position -> name
	calls map[string]map[string][]instrument.Pos // import path -> names of the functions it inlined calls of -> where
	heap  map[string][]escape                    // file -> values moved or escaping to the heap
}

// escape is a value the compiler reports moved or escaping to the heap.
type escape struct {
	line, col int
	msg       string
}

var (
	canInlineRE = regexp.MustCompile(`^(.+):(\d+):(\d+): can inline (\S+)`)
	inliningRE  = regexp.MustCompile(`^(.+):(\d+):(\d+): inlining call to (\S+)`)
	heapRE      = regexp.MustCompile(`^(.+):(\d+):(\d+): (moved to heap: \S+|.* escapes to heap)$`)
	// A constant put in an interface "escapes", but the compiler points
	// the interface at read-only data: nothing is allocated.
	constRE = regexp.MustCompile(`^("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?[0-9][0-9a-fA-FxX._eEpPi+-]*|true|false) escapes to heap$`)
)

// parseInlining reads the compiler's report. A file it names by a
// relative path is relative to where the go command ran, dir, unless the
// report is one the go command cached from a run elsewhere and replays as
// it was: then it is the file of that name in the directory of the
// package reported (dirs, by import path).
func parseInlining(dir string, dirs map[string]string, stderr []byte) inlineReport {
	r := inlineReport{decls: map[string]map[instrument.Pos]string{}, calls: map[string]map[string][]instrument.Pos{}, heap: map[string][]escape{}}
	pkg := ""
	resolved := map[[2]string]string{} // by package and file as reported: a report names a file on many lines
	abs := func(file string) string {
		if filepath.IsAbs(file) {
			return filepath.Clean(file)
		}
		if f, ok := resolved[[2]string{pkg, file}]; ok {
			return f
		}
		f := filepath.Join(dir, file)
		if _, err := os.Stat(f); err != nil && dirs[pkg] != "" {
			if in := filepath.Join(dirs[pkg], filepath.Base(file)); in != f {
				if _, err := os.Stat(in); err == nil {
					f = in
				}
			}
		}
		resolved[[2]string{pkg, file}] = f
		return f
	}
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "# "); ok {
			pkg = basePath(p)
			continue
		}
		if m := canInlineRE.FindStringSubmatch(line); m != nil {
			file := abs(m[1])
			l, _ := strconv.Atoi(m[2])
			c, _ := strconv.Atoi(m[3])
			if r.decls[pkg] == nil {
				r.decls[pkg] = map[instrument.Pos]string{}
			}
			r.decls[pkg][instrument.Pos{File: file, Line: l, Col: c}] = plainName(m[4])
			continue
		}
		if m := heapRE.FindStringSubmatch(line); m != nil && !constRE.MatchString(m[4]) {
			file := abs(m[1])
			l, _ := strconv.Atoi(m[2])
			c, _ := strconv.Atoi(m[3])
			r.heap[file] = append(r.heap[file], escape{l, c, m[4]})
			continue
		}
		if m := inliningRE.FindStringSubmatch(line); m != nil {
			if r.calls[pkg] == nil {
				r.calls[pkg] = map[string][]instrument.Pos{}
			}
			l, _ := strconv.Atoi(m[2])
			c, _ := strconv.Atoi(m[3])
			name := plainName(m[4])
			r.calls[pkg][name] = append(r.calls[pkg][name], instrument.Pos{File: abs(m[1]), Line: l, Col: c})
		}
	}
	return r
}

// inlined returns the positions of the inlinable functions with a call
// inlined, each with where its calls were: in their own package, where
// the compiler names them as it declared them, or in another, where it
// qualifies them with their package's name.
func (r inlineReport) inlined(names map[string]string) map[instrument.Pos][]instrument.Pos {
	set := map[instrument.Pos][]instrument.Pos{}
	for pkg, decls := range r.decls {
		qual := names[pkg] + "."
		for pos, name := range decls {
			sites := r.calls[pkg][name]
			for other, calls := range r.calls {
				if other != pkg {
					sites = append(sites, calls[qual+name]...)
				}
			}
			if len(sites) > 0 {
				set[pos] = sites
			}
		}
	}
	return set
}

// basePath returns the import path of a package without the variant the
// go command adds to it: "p [p.test]", p compiled with its tests, is p.
func basePath(s string) string {
	s, _, _ = strings.Cut(s, " ")
	return s
}

// plainName drops the type arguments from a function's name as the
// compiler reports it: gen[go.shape.int] and (*T[go.shape.int]).M are
// gen and (*T).M.
func plainName(s string) string {
	var b strings.Builder
	depth := 0
	for _, c := range s {
		switch {
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth == 0:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// gcflagsFor returns, for each of the probed packages, the compiler flags
// the user's -gcflags give it, as the go command chooses them: the last
// -gcflags whose pattern matches the package; without a pattern, one
// that applies to the packages named on the command line.
func gcflagsFor(dir string, env, flags, gcflags, probed, cmdline []string) (map[string]string, error) {
	out := map[string]string{}
	for _, g := range gcflags {
		pattern, value, hasPattern := strings.Cut(g, "=")
		if !hasPattern || strings.HasPrefix(g, "-") {
			pattern, value = "", g
		}
		var match map[string]bool
		switch pattern {
		case "", "all":
		default:
			ps, err := list(dir, env, flags, false, pattern)
			if err != nil {
				return nil, err
			}
			match = map[string]bool{}
			for _, p := range ps {
				match[p.ImportPath] = true
			}
		}
		for _, p := range probed {
			applies := pattern == "all" || match[p]
			if pattern == "" {
				for _, c := range cmdline {
					applies = applies || c == p
				}
			}
			if applies {
				out[p] = value
			}
		}
	}
	return out, nil
}
