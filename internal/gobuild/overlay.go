package gobuild

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"go/scanner"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/calltrail/calltrail/instrument"
	"github.com/calltrail/calltrail/tracefile"
)

// Build describes a build of traced programs with the go command, without
// touching the user's files: instrumented copies of the source reach the
// compiler through go build -overlay, and the runtime through -modfile, a
// copy of the module's go.mod that requires the runtime and replaces it
// with a copy of its source in the user's cache directory.
type Build struct {
	Dir string // where the go command runs
	// Flags are the user's flags for the go command's build or test;
	// those that choose files (-tags, -mod, -gcflags...) go to go list
	// too.
	Flags    []string
	Patterns []string // the packages built
	// Instrument, if set, is the go list patterns of the packages to
	// instrument; otherwise every package of the main module is.
	Instrument []string
	Tests      bool               // instrument test files too
	Options    instrument.Options // function filters
	Runtime    fs.FS              // the runtime's source, as calltrail.Source returns it
	// TraceInlined traces every function the compiler inlines, even
	// those otherwise kept inlined to keep a value off the heap (see
	// KeepInlined).
	TraceInlined bool
	// Endpoint says which main packages instrumented get an import of
	// the runtime's control endpoint (package live), which serves the
	// program's calls on CALLTRAIL_HTTP when that is set.
	Endpoint Endpoint
	// NoSpans leaves the OpenTelemetry SDK as it is: by default, a
	// program that links it records the spans it starts (see OTelSDK).
	NoSpans bool
	// Profiles lists the Go runtime's profiles ("cpu,mutex,block") the
	// programs record unless CALLTRAIL_PROFILES says otherwise. Unless
	// it is empty, they link package profiles (see addProfiles), which
	// they need to record any.
	Profiles string

	Work string   // temporary directory for the overlay; set by Prepare
	Env  []string // environment the go command needs (GOWORK); set by Prepare

	env map[string]string // the go command's variables (see goEnv)
}

// Stats says what Prepare instrumented.
type Stats struct {
	Packages, Files, Funcs, Lines int
	Omitted                       map[instrument.Why]int // functions left untraced, by why
	// Refused are the packages of the standard library --pkgs matched
	// that cannot be traced (see stdRefused).
	Refused []string
	// Spans says whether the program records its OpenTelemetry spans;
	// NoSpans, when it links the SDK but cannot, says why.
	Spans   bool
	NoSpans string
}

// count adds a file's omitted functions to st.
func (st *Stats) count(omitted []instrument.Omitted) {
	for _, o := range omitted {
		st.omit(o.Why, 1)
	}
}

// omit adds n functions left untraced for why.
func (st *Stats) omit(why instrument.Why, n int) {
	if st.Omitted == nil {
		st.Omitted = map[instrument.Why]int{}
	}
	st.Omitted[why] += n
}

// Prepare writes the overlay and the module file and returns the flags
// for the go command that builds the traced program: the user's, with
// calltrail's tags and linker flag added, and those that give it the
// overlay and the module file.
func (b *Build) Prepare() ([]string, Stats, error) {
	var st Stats
	user := parseGoFlags(b.Flags)
	if err := ownFlags(user); err != nil {
		return nil, st, err
	}
	mod, err := mainModule(b.Dir)
	if err != nil {
		return nil, st, err
	}
	flags := flagArgs(append([]goFlag{tags(user, buildTags...)}, selecting(without(user, "tags"))...))
	b.Work, err = os.MkdirTemp("", "calltrail-build-")
	if err != nil {
		return nil, st, err
	}
	var out []string
	work := b.goEnv("GOWORK")
	if work == "off" {
		work = ""
	}
	if work != "" {
		// A workspace: the runtime joins it as one more module.
		gowork, err := b.workFile(work, nil)
		if err != nil {
			return nil, st, err
		}
		b.Env = []string{"GOWORK=" + gowork}
	} else if mod.Path != instrument.RuntimePath {
		modfile, err := b.modFile(mod)
		if err != nil {
			return nil, st, err
		}
		out = append(out, "-modfile="+modfile)
		flags = append(flags, "-modfile="+modfile)
		if values(user, "mod") == nil {
			// The module file is calltrail's own copy: the go command
			// may bring it up to date (old go directives ask for that),
			// and take modules from the module cache rather than a
			// vendor directory, which does not hold the runtime.
			out = append(out, "-mod=mod")
			flags = append(flags, "-mod=mod")
		}
	}
	// The runtime's dependencies are listed beside the program's
	// packages, on the other core, and compiled as the build compiles
	// them, which then finds them in the go command's cache: they are
	// the longest chain of compiles a traced build adds to a program's
	// (its trace reader, runtime/pprof), and run while calltrail lists
	// the packages and the compiler reports on them. The list is waited
	// for where it is needed.
	var rtDeps map[string]bool
	rtErr := make(chan error, 1)
	go func() {
		var err error
		rtDeps, err = b.runtimeDeps(user, flags)
		rtErr <- err
	}()
	rtWaited := false
	var rtWaitErr error
	waitRuntime := func() error {
		if !rtWaited {
			rtWaited, rtWaitErr = true, <-rtErr
		}
		return rtWaitErr
	}
	defer waitRuntime() // the go command is not left running
	// Tests import packages the code tested does not: the main
	// module's are traced too, and the OpenTelemetry SDK often comes
	// that way alone. go list gives them with -test.
	var testDeps []Package
	testErr := make(chan error, 1)
	go func() {
		var err error
		if b.Tests {
			testDeps, err = list(b.Dir, b.Env, append(append([]string(nil), flags...), "-test"), true, b.Patterns...)
		}
		testErr <- err
	}()
	pkgs, err := list(b.Dir, b.Env, flags, true, b.Patterns...)
	if err := <-testErr; err != nil {
		return nil, st, err
	}
	if err != nil {
		return nil, st, err
	}
	pkgs = withTestDeps(pkgs, testDeps)
	for _, p := range pkgs {
		if p.Error != nil && len(p.GoFiles)+len(p.CgoFiles) == 0 && containsPattern(b.Patterns, p.ImportPath) {
			return nil, st, fmt.Errorf("%s: %s", p.ImportPath, b.userError(user, p))
		}
	}
	chosen := map[string]bool{}
	if b.Instrument != nil {
		sel, err := list(b.Dir, b.Env, flags, false, b.Instrument...)
		if err != nil {
			return nil, st, err
		}
		matched := map[string]bool{}
		for _, p := range sel {
			if p.Error == nil || len(p.GoFiles)+len(p.CgoFiles) > 0 {
				chosen[p.ImportPath] = true
				for _, m := range p.Match {
					matched[m] = true
				}
			}
		}
		// Each pattern on its own: a misspelt one beside others that
		// match would leave its packages untraced without a word.
		var none []string
		for _, pat := range b.Instrument {
			if !matched[pat] {
				none = append(none, pat)
			}
		}
		if len(none) > 0 {
			return nil, st, fmt.Errorf("--pkgs %s: matches no package", strings.Join(none, " "))
		}
	}
	replace := map[string]string{}
	opts := b.Options
	opts.Runtime = instrument.RuntimePath
	deps := map[string]*depModule{} // modules in the module cache, by path
	modcache := b.goEnv("GOMODCACHE")
	inCache := func(dir string) bool {
		return modcache != "" && strings.HasPrefix(dir, modcache+string(filepath.Separator))
	}
	own, err := runtimePackages(b.Runtime)
	if err != nil {
		return nil, st, err
	}
	blocked := b.stdBlocked()
	std := false // a package of the standard library is traced
	var selected []Package
	var importers []string
	untraced := map[string]string{} // packages of the build not instrumented: why
	var laterStd []string           // packages of the standard library to say why of, once the runtime's are known
	// The hints name the main module: --pkgs replaces it, so a pattern
	// given alone would leave it out.
	mainMod := "./..."
	for _, p := range pkgs {
		if p.Module != nil && p.Module.Main {
			mainMod = p.Module.Path + "/..."
			break
		}
	}
	for _, p := range pkgs {
		if !p.DepOnly && !p.Standard {
			importers = append(importers, p.ImportPath)
		}
		if p.Standard && !(b.Instrument != nil && chosen[p.ImportPath]) {
			laterStd = append(laterStd, p.ImportPath)
			continue
		}
		if p.Standard {
			if err := waitRuntime(); err != nil {
				return nil, st, err
			}
			why := stdRefused(p.ImportPath, rtDeps, blocked)
			switch {
			case b.Instrument != nil && chosen[p.ImportPath] && why == "":
				selected = append(selected, p)
				std = true
			case b.Instrument != nil && chosen[p.ImportPath]:
				if slices.Contains(b.Instrument, p.ImportPath) {
					return nil, st, fmt.Errorf("--pkgs %s: cannot trace it: %s", p.ImportPath, why)
				}
				st.Refused = append(st.Refused, p.ImportPath)
				untraced[p.ImportPath] = "in the standard library: " + why
			}
			continue
		}
		if own[p.ImportPath] {
			untraced[p.ImportPath] = "calltrail's own runtime"
			continue // tracing the tracer would only record itself
		}
		// Files named on the command line make a package of no module:
		// they are the user's own, as the main module's are.
		own := p.Module != nil && p.Module.Main || p.ImportPath == "command-line-arguments" && !p.DepOnly
		if b.Instrument != nil && !chosen[p.ImportPath] {
			untraced[p.ImportPath] = "not matched by --pkgs: add " + p.ImportPath + " to its patterns, separated by spaces, to trace it"
			if _, said := untraced["main"]; p.Name == "main" && !said {
				untraced["main"] = untraced[p.ImportPath] // see mainSaid
			}
			continue
		}
		if b.Instrument == nil && !own {
			untraced[p.ImportPath] = "not in the main module: --pkgs '" + mainMod + " " + p.ImportPath + "' traces it with the main module"
			continue
		}
		selected = append(selected, p)
	}
	if !b.TraceInlined && len(selected) > 0 {
		paths := make([]string, len(selected))
		for i, p := range selected {
			paths[i] = p.ImportPath
		}
		q := InlineQuery{Dir: b.Dir, Env: b.Env, Flags: flags, Packages: paths, Importers: importers, Tests: b.Tests, KeepGoing: b.Tests}
		if slices.Contains(paths, "command-line-arguments") {
			q.Files = b.Patterns
		}
		opts.KeepInlined, err = KeepInlined(q)
		if err != nil {
			return nil, st, err
		}
	}
	if err := waitRuntime(); err != nil {
		return nil, st, err
	}
	for _, path := range laterStd {
		if why := stdRefused(path, rtDeps, blocked); why != "" {
			untraced[path] = "in the standard library: " + why
		} else {
			untraced[path] = "in the standard library: --pkgs " + path + " traces it"
		}
	}
	if !b.NoSpans {
		if err := b.hookSDK(append(pkgs, testDeps...), selected, deps, inCache, replace, &st); err != nil {
			return nil, st, err
		}
	}
	var homeless []tracefile.Coverage // of packages with nothing traced
	carrier := ""                     // an instrumented copy to register them
	mainSaid := false
	for _, p := range selected {
		if p.Module != nil && !p.Module.Main && inCache(p.Dir) {
			// The go command does not overlay files in the module
			// cache: such a module is copied and instrumented, below.
			d := deps[p.Module.Path]
			if d == nil {
				d = &depModule{path: p.Module.Path, version: p.Module.Version, dir: p.Module.Dir}
				deps[p.Module.Path] = d
			}
			d.pkgs = append(d.pkgs, p)
			continue
		}
		files := append(append([]string(nil), p.GoFiles...), p.CgoFiles...)
		if b.Tests && !p.Standard {
			files = append(append(files, p.TestGoFiles...), p.XTestGoFiles...)
		}
		cov := tracefile.Coverage{Package: p.ImportPath}
		// The package's last instrumented copy, which registers its
		// coverage: one the package always compiles, not a test's,
		// when there is one. A test file is compiled only into the
		// package's own tests, not into those of the packages that
		// import it, whose traces would lack its coverage.
		last, lastTest := "", ""
		inits := map[string]int{} // by package, the test's apart: see instrument.Options.Inits
		for _, name := range files {
			o := opts
			o.Package = p.ImportPath
			if p.Standard {
				// The standard library sees the runtime through a
				// package of its own, which records no values.
				o.Runtime, o.Args = StdRuntimePath, nil
			}
			if slices.Contains(p.XTestGoFiles, name) {
				o.Package += "_test"
			}
			if p.ImportPath == "command-line-arguments" && p.Name == "main" && last == "" {
				// Files named on the command line make a package no
				// file can be added to: the first instrumented one
				// imports what addImport would.
				o.Imports = nil
				if b.Profiles != "" {
					o.Imports = append(o.Imports, ProfilesPath)
				}
				if b.Endpoint.links(p) {
					o.Imports = append(o.Imports, LivePath)
				}
			}
			src := filepath.Join(p.Dir, name)
			data, err := os.ReadFile(src)
			if err != nil {
				return nil, st, err
			}
			o.LineFile = src // the copy lives elsewhere
			o.Inits = inits[o.Package]
			res, err := instrument.File(src, data, o)
			inits[o.Package] += res.Inits
			var syntax scanner.ErrorList
			if errors.As(err, &syntax) && b.Tests {
				continue // go test says so, and tests the other packages
			}
			if err != nil {
				return nil, st, err
			}
			st.Lines += bytes.Count(data, []byte("\n"))
			st.count(res.Omitted)
			addCoverage(&cov, src, res)
			if res.Skipped != "" {
				continue
			}
			dst := filepath.Join(b.Work, fmt.Sprintf("%d_%s", len(replace), name))
			if err := os.WriteFile(dst, res.Src, 0o644); err != nil {
				return nil, st, err
			}
			replace[src] = dst
			st.Files++
			st.Funcs += len(res.Funcs)
			if slices.Contains(p.TestGoFiles, name) || slices.Contains(p.XTestGoFiles, name) {
				lastTest = dst
			} else {
				last = dst
			}
		}
		if last == "" {
			last = lastTest
		}
		if !p.DepOnly {
			cov.Untraced = untracedDeps(p, untraced)
		}
		if !mainSaid {
			cov.Untraced = append(cov.Untraced, namedLeftOut(pkgs, untraced)...)
			mainSaid = true
		}
		if last == "" {
			// Nothing of it is traced: another package's copy
			// registers what it left out, and why.
			if len(cov.Omitted)+len(cov.Untraced) > 0 {
				homeless = append(homeless, cov)
			}
			continue
		}
		carrier = last
		if err := appendCoverage(last, cov); err != nil {
			return nil, st, err
		}
		st.Packages++
	}
	// The control endpoint goes into each main package named on the
	// command line, traced or not (--pkgs may leave it out).
	for _, p := range pkgs {
		if p.Name == "main" && !p.DepOnly && !p.Standard && p.ImportPath != "command-line-arguments" && !inCache(p.Dir) && b.Endpoint.links(p) {
			if err := b.addImport(p.Dir, "main", "calltrail_live_generated.go", LivePath, replace); err != nil {
				return nil, st, err
			}
		}
	}
	if b.Profiles != "" {
		if err := b.addProfiles(pkgs, inCache, replace); err != nil {
			return nil, st, err
		}
	}
	if carrier == "" {
		// Only packages of the module cache are traced, if any: a
		// copy of theirs registers what was left out, and why.
		var paths []string
		for path, d := range deps {
			if len(d.pkgs) > 0 {
				paths = append(paths, path)
			}
		}
		if len(paths) > 0 {
			slices.Sort(paths)
			d := deps[paths[0]]
			if left := namedLeftOut(pkgs, untraced); len(left) > 0 && !mainSaid {
				homeless = append(homeless, tracefile.Coverage{Package: d.pkgs[0].ImportPath, Untraced: left})
			}
			d.homeless, homeless = homeless, nil
		}
	}
	for _, c := range homeless {
		if carrier == "" {
			break // nothing traced: no trace either
		}
		if err := appendCoverage(carrier, c); err != nil {
			return nil, st, err
		}
	}
	if std {
		if err := b.addStdRuntime(replace); err != nil {
			return nil, st, err
		}
		// The standard library's traced packages reach the runtime
		// through internal/calltrailstd, whose functions the runtime
		// defines: it must be linked, though no package of the
		// program's that imports it be traced (--pkgs encoding/json).
		if err := b.linkInto(pkgs, inCache, replace, "calltrail_runtime_generated", instrument.RuntimePath); err != nil {
			return nil, st, err
		}
	}
	if len(deps) > 0 {
		replaces := map[string]string{}
		for _, d := range deps {
			dir, n, err := b.instrumentModule(d, opts)
			if err != nil {
				return nil, st, err
			}
			replaces[d.path] = dir
			st.Packages += len(d.pkgs)
			st.Funcs += n.Funcs
			for why, k := range n.Omitted {
				st.omit(why, k)
			}
		}
		// Write the module or workspace file again, with the copies.
		if work != "" {
			if _, err := b.workFile(work, replaces); err != nil {
				return nil, st, err
			}
		} else if err := replaceIn(filepath.Join(b.Work, "go.mod"), replaces); err != nil {
			return nil, st, err
		}
	}
	overlay, err := writeOverlay(b.Work, replace)
	if err != nil {
		return nil, st, err
	}
	return buildFlags(user, b.goMinor(), b.Profiles, append(out, "-overlay="+overlay)...), st, nil
}

// addCoverage adds what File did to the file at path to c.
func addCoverage(c *tracefile.Coverage, path string, res instrument.Result) {
	for _, f := range res.Funcs {
		c.Traced = append(c.Traced, f.Name)
	}
	for _, o := range res.Omitted {
		c.Omitted = append(c.Omitted, tracefile.Omitted{Name: o.Name, File: filepath.Base(path), Line: o.Line, Why: string(o.Why), Detail: o.Detail})
	}
}

// userError is why package p, named on the command line, cannot be
// built, as the go command tells the user without calltrail's flags: a
// package no module provides is looked for in the module proxy under
// calltrail's -mod=mod, and the proxy's answer would say less than the
// go command's own (no required module provides package ...).
func (b *Build) userError(user []goFlag, p Package) string {
	own, err := list(b.Dir, nil, flagArgs(selecting(user)), false, p.ImportPath)
	if err == nil && len(own) == 1 && own[0].Error != nil {
		return own[0].Error.Err
	}
	return p.Error.Err
}

// withTestDeps returns pkgs, a build's packages, with those only their
// tests import, from testDeps (go list -deps -test of the same), each
// once, by its own import path and as a dependency: the go command may
// compile a variant of one for a test (listed as "p [q.test]"), from the
// same files, which the overlay instruments alike. The tests' own
// packages are left out: their files are the tested package's.
func withTestDeps(pkgs, testDeps []Package) []Package {
	have := map[string]bool{}
	for _, p := range pkgs {
		have[p.ImportPath] = true
	}
	for _, p := range testDeps {
		path := basePath(p.ImportPath)
		test := strings.HasSuffix(p.Name, "_test") || p.Name == "main" && strings.HasSuffix(path, ".test")
		if have[path] || test {
			continue
		}
		have[path] = true
		p.ImportPath, p.DepOnly = path, true
		deps := make([]string, len(p.Deps))
		for i, d := range p.Deps {
			deps[i] = basePath(d)
		}
		p.Deps = deps
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// appendCoverage appends the declaration registering c to the
// instrumented copy at path.
func appendCoverage(path string, c tracefile.Coverage) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(instrument.CoverageDecl(c))
	return errors.Join(err, f.Close())
}

// namedLeftOut lists, of the packages named on the command line that
// were not instrumented, their dependencies not instrumented either, with
// why, from untraced: the dependencies of those instrumented are listed
// with them (untracedDeps). A main package left out is listed as "main",
// its functions' prefix. A package left out depends on the packages
// traced, not they on it: the list goes with one of them.
func namedLeftOut(pkgs []Package, untraced map[string]string) []tracefile.Untraced {
	var out []tracefile.Untraced
	seen := map[string]bool{}
	for _, p := range pkgs {
		if _, left := untraced[p.ImportPath]; p.DepOnly || !left {
			continue
		}
		for _, u := range untracedDeps(p, untraced) {
			if !seen[u.Path] {
				seen[u.Path] = true
				out = append(out, u)
			}
		}
	}
	if why, ok := untraced["main"]; ok {
		out = append(out, tracefile.Untraced{Path: "main", Why: why})
	}
	return out
}

// untracedDeps lists the dependencies of p that were not instrumented,
// with why, from untraced.
func untracedDeps(p Package, untraced map[string]string) []tracefile.Untraced {
	var out []tracefile.Untraced
	for _, d := range p.Deps {
		if why, ok := untraced[d]; ok {
			out = append(out, tracefile.Untraced{Path: d, Why: why})
		}
	}
	return out
}

// Close removes the overlay's files.
func (b *Build) Close() error {
	if b.Work == "" {
		return nil
	}
	return os.RemoveAll(b.Work)
}

type module struct {
	Path, Dir string
}

// mainModule finds the module the go command treats as main in dir: the
// one holding dir when several are (go.work).
func mainModule(dir string) (module, error) {
	cmd := exec.Command("go", "list", "-m", "-json")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return module{}, fmt.Errorf("go list -m: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	abs, _ := filepath.Abs(dir)
	var best module
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var m module
		if err := dec.Decode(&m); err != nil {
			return module{}, err
		}
		if best.Dir == "" || strings.HasPrefix(abs+string(filepath.Separator), m.Dir+string(filepath.Separator)) && len(m.Dir) > len(best.Dir) {
			best = m
		}
	}
	if best.Dir == "" {
		return module{}, fmt.Errorf("no main module in %s: run calltrail inside a Go module", dir)
	}
	return best, nil
}

// modFile writes a copy of the main module's go.mod (and go.sum beside it)
// that requires the runtime, replaced by its source in the cache, and
// returns its path.
func (b *Build) modFile(mod module) (string, error) {
	rt, err := RuntimeModule(b.Runtime)
	if err != nil {
		return "", err
	}
	gomod, err := os.ReadFile(filepath.Join(mod.Dir, "go.mod"))
	if err != nil {
		return "", err
	}
	dst := filepath.Join(b.Work, "go.mod")
	if err := os.WriteFile(dst, gomod, 0o644); err != nil {
		return "", err
	}
	if err := editReplaces(dst, mod.Dir, rt); err != nil {
		return "", err
	}
	if sum, err := os.ReadFile(filepath.Join(mod.Dir, "go.sum")); err == nil {
		if err := os.WriteFile(filepath.Join(b.Work, "go.sum"), sum, 0o644); err != nil {
			return "", err
		}
	}
	return dst, nil
}

// workFile writes a copy of the workspace file work, with its paths made
// absolute, that uses the runtime's module too, and returns its path.
func (b *Build) workFile(work string, replaces map[string]string) (string, error) {
	rt, err := RuntimeModule(b.Runtime)
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "work", "edit", "-json", work)
	cmd.Dir = b.Dir
	js, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go work edit -json %s: %v", work, err)
	}
	var w struct {
		Go, Toolchain string
		Use           []struct{ DiskPath string }
		Replace       []struct {
			Old, New struct{ Path, Version string }
		}
	}
	if err := json.Unmarshal(js, &w); err != nil {
		return "", err
	}
	base := filepath.Dir(work)
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(base, p)
	}
	var f bytes.Buffer
	fmt.Fprintf(&f, "go %s\n", w.Go)
	if w.Toolchain != "" {
		fmt.Fprintf(&f, "toolchain %s\n", w.Toolchain)
	}
	fmt.Fprintf(&f, "\nuse (\n")
	for _, u := range w.Use {
		fmt.Fprintf(&f, "\t%q\n", abs(u.DiskPath))
	}
	fmt.Fprintf(&f, "\t%q\n)\n", rt)
	for _, r := range w.Replace {
		old := r.Old.Path
		if r.Old.Version != "" {
			old += " " + r.Old.Version
		}
		repl := r.New.Path
		if r.New.Version != "" {
			repl += " " + r.New.Version
		} else if strings.HasPrefix(repl, ".") {
			repl = abs(repl)
		}
		if _, ours := replaces[r.Old.Path]; !ours {
			fmt.Fprintf(&f, "replace %s => %s\n", old, repl)
		}
	}
	dst := filepath.Join(b.Work, "go.work")
	f = *bytes.NewBuffer(appendReplaces(f.Bytes(), replaces))
	if err := os.WriteFile(dst, f.Bytes(), 0o644); err != nil {
		return "", err
	}
	if sum, err := os.ReadFile(work + ".sum"); err == nil {
		if err := os.WriteFile(dst+".sum", sum, 0o644); err != nil {
			return "", err
		}
	}
	return dst, nil
}

// replaceIn makes the module file modfile replace each module path by
// its directory, overriding the file's own replacements of them.
func replaceIn(modfile string, replaces map[string]string) error {
	args := []string{"mod", "edit"}
	for p, dir := range replaces {
		args = append(args, "-dropreplace="+p, "-replace="+p+"="+dir)
	}
	if out, err := exec.Command("go", append(args, modfile)...).CombinedOutput(); err != nil {
		return fmt.Errorf("go mod edit: %v: %s", err, out)
	}
	return nil
}

// editReplaces makes the copy modfile of the go.mod in dir stand where
// it is: its replacements by relative paths become absolute. And it makes
// the module require the runtime, replaced by its source in rt, in place
// of any requirement or replacement of the runtime the module has (a
// module that uses live.Register before a release may point it at a
// checkout of its own): the guards calltrail writes are this runtime's.
func editReplaces(modfile, dir, rt string) error {
	out, err := exec.Command("go", "mod", "edit", "-json", modfile).Output()
	if err != nil {
		return fmt.Errorf("go mod edit -json: %v", err)
	}
	var m struct {
		Replace []struct {
			Old, New struct{ Path, Version string }
		}
	}
	if err := json.Unmarshal(out, &m); err != nil {
		return err
	}
	args := []string{"mod", "edit"}
	for _, r := range m.Replace {
		old := r.Old.Path
		if r.Old.Version != "" {
			old += "@" + r.Old.Version
		}
		switch {
		case r.Old.Path == instrument.RuntimePath:
			args = append(args, "-dropreplace="+old)
		case r.New.Version == "" && (strings.HasPrefix(r.New.Path, "./") || strings.HasPrefix(r.New.Path, "../")):
			args = append(args, "-replace="+old+"="+filepath.Join(dir, r.New.Path))
		}
	}
	args = append(args, "-droprequire="+instrument.RuntimePath, "-require="+instrument.RuntimePath+"@v0.0.0-calltrail", "-replace="+instrument.RuntimePath+"="+rt, modfile)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go mod edit: %v: %s", err, out)
	}
	return nil
}

// runtimePackages returns the import paths of the runtime's own packages:
// the directories of its source.
func runtimePackages(src fs.FS) (map[string]bool, error) {
	own := map[string]bool{}
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if dir := path.Dir(p); dir == "." {
				own[instrument.RuntimePath] = true
			} else {
				own[instrument.RuntimePath+"/"+dir] = true
			}
		}
		return err
	})
	return own, err
}

// appendReplaces adds replace directives for the instrumented copies of
// modules, which come after and so win over the user's own.
func appendReplaces(file []byte, replaces map[string]string) []byte {
	paths := make([]string, 0, len(replaces))
	for p := range replaces {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		file = fmt.Appendf(file, "replace %s => %s\n", p, replaces[p])
	}
	return file
}

// depModule is a module outside the main ones with packages to instrument
// or files to add or replace (hook, by path).
type depModule struct {
	path, version, dir string
	pkgs               []Package
	hook               map[string][]byte
	// homeless is the coverage of packages with nothing traced, for
	// the copy to register when no package outside the module cache
	// can.
	homeless []tracefile.Coverage
}

// instrumentModule writes a copy of module d with its chosen packages
// instrumented, in the user's cache directory at a path named by what
// goes into it, and returns the copy's directory and the functions
// instrumented and left out.
func (b *Build) instrumentModule(d *depModule, opts instrument.Options) (string, Stats, error) {
	type edit struct {
		rel string
		src []byte
	}
	var edits []edit
	var st Stats
	for _, p := range d.pkgs {
		files := append(append([]string(nil), p.GoFiles...), p.CgoFiles...)
		cov := tracefile.Coverage{Package: p.ImportPath}
		first := len(edits)
		inits := 0 // see instrument.Options.Inits
		for _, name := range files {
			path := filepath.Join(p.Dir, name)
			data, err := os.ReadFile(path)
			if err != nil {
				return "", st, err
			}
			o := opts
			o.Package = p.ImportPath
			o.Inits = inits
			res, err := instrument.File(path, data, o)
			if err != nil {
				return "", st, err
			}
			inits += res.Inits
			st.count(res.Omitted)
			addCoverage(&cov, path, res)
			if res.Skipped != "" {
				continue
			}
			rel, err := filepath.Rel(d.dir, path)
			if err != nil {
				return "", st, err
			}
			edits = append(edits, edit{rel, res.Src})
			st.Funcs += len(res.Funcs)
		}
		if len(edits) > first {
			last := &edits[len(edits)-1]
			last.src = append(last.src, instrument.CoverageDecl(cov)...)
		}
	}
	if len(edits) > 0 {
		last := &edits[len(edits)-1]
		for _, c := range d.homeless {
			last.src = append(last.src, instrument.CoverageDecl(c)...)
		}
	}
	for path, src := range d.hook {
		rel, err := filepath.Rel(d.dir, path)
		if err != nil {
			return "", st, err
		}
		edits = append(edits, edit{rel, src})
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].rel < edits[j].rel })
	h := sha256.New()
	fmt.Fprintf(h, "%s@%s\n", d.path, d.version)
	for _, e := range edits {
		fmt.Fprintf(h, "%s %d\n", e.rel, len(e.src))
		h.Write(e.src)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "calltrail", "mods", fmt.Sprintf("%x", h.Sum(nil)[:10]))
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir, st, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", st, cacheError(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "tmp-")
	if err != nil {
		return "", st, cacheError(err)
	}
	err = filepath.WalkDir(d.dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(d.dir, p)
		dst := filepath.Join(tmp, rel)
		if e.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !e.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err == nil && !fileExists(filepath.Join(tmp, "go.mod")) {
		// Modules from before go.mod, and vendored copies, lack one.
		err = os.WriteFile(filepath.Join(tmp, "go.mod"), []byte("module "+d.path+"\n"), 0o644)
	}
	for _, e := range edits {
		if err == nil {
			err = os.WriteFile(filepath.Join(tmp, e.rel), e.src, 0o644)
		}
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, dir)
		if err != nil && fileExists(filepath.Join(dir, ".complete")) {
			err = nil // another calltrail got there first
		}
	}
	if err != nil {
		os.RemoveAll(tmp)
		return "", st, err
	}
	return dir, st, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// buildEnv are the go command's variables a build reads: Build.goEnv asks
// the go command for them all at once.
var buildEnv = []string{"GOWORK", "GOMODCACHE", "GOVERSION", "GOROOT"}

// goEnv returns the go command's value of one of buildEnv, as it is in
// b.Dir.
func (b *Build) goEnv(name string) string {
	if b.env == nil {
		b.env = map[string]string{}
		cmd := exec.Command("go", append([]string{"env", "-json"}, buildEnv...)...)
		cmd.Dir = b.Dir
		if out, err := cmd.Output(); err == nil {
			json.Unmarshal(out, &b.env)
		}
	}
	return b.env[name]
}

// goEnv returns the go command's value of an environment variable.
func goEnv(dir, name string) string {
	cmd := exec.Command("go", "env", name)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// runtimeGoMod is the module file of the runtime's copy. It declares no
// Go version: a module requiring one raises the go line of the user's
// module to it when the go command brings the user's module file up to
// date, and that changes the user's program (its language version, its
// GODEBUG defaults); a workspace refuses it. Each file of the copy says
// the version its code is written in instead (withGoVersion).
const runtimeGoMod = "module " + instrument.RuntimePath + "\n"

// runtimeLang is the Go version the runtime is written in: the go line of
// calltrail's go.mod.
const runtimeLang = "go1.22"

// withGoVersion returns the Go file src with runtimeLang added to its
// build constraint, or a constraint of it added: a file's //go:build line
// sets its language version, for the compiler and vet, above that of its
// module (from Go 1.21 on).
func withGoVersion(src []byte) []byte {
	rest := src
	for len(rest) > 0 {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		trimmed := bytes.TrimSpace(line)
		if expr, ok := bytes.CutPrefix(trimmed, []byte("//go:build ")); ok {
			at := len(src) - len(rest)
			out := append([]byte(nil), src[:at]...)
			out = append(out, "//go:build "+runtimeLang+" && ("...)
			out = append(out, bytes.TrimSpace(expr)...)
			out = append(out, ')')
			return append(out, src[at+len(line):]...)
		}
		if len(trimmed) > 0 && !bytes.HasPrefix(trimmed, []byte("//")) {
			break // the header, where constraints are, has ended
		}
		rest = after
	}
	return append([]byte("//go:build "+runtimeLang+"\n\n"), src...)
}

// cacheError says that err came from calltrail's cache, under the user's
// cache directory: where the runtime's copy and the instrumented modules
// are kept between builds.
func cacheError(err error) error {
	return fmt.Errorf("calltrail's cache, in the user's cache directory: %w", err)
}

// RuntimeModule writes the runtime's source src (as calltrail.Source
// returns it) as a module in the user's cache directory, at a path named
// by a hash of the source, and returns the directory: every build with
// this calltrail finds the same files, and the go command's build cache
// is reused.
func RuntimeModule(src fs.FS) (string, error) {
	h := sha256.New()
	var files []string
	contents := map[string][]byte{} // as written: the hash is of them
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".go") {
			data = withGoVersion(data)
		}
		fmt.Fprintf(h, "%s %d\n", p, len(data))
		h.Write(data)
		files = append(files, p)
		contents[p] = data
		return nil
	})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "go.mod %q\n", runtimeGoMod)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "calltrail", fmt.Sprintf("runtime-%x", h.Sum(nil)[:8]))
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		return dir, nil // complete: go.mod is written last
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "tmp-runtime-")
	if err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return "", cacheError(err)
		}
		if tmp, err = os.MkdirTemp(filepath.Dir(dir), "tmp-runtime-"); err != nil {
			return "", cacheError(err)
		}
	}
	for _, p := range files {
		data := contents[p]
		dst := filepath.Join(tmp, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte(runtimeGoMod), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr == nil {
			return dir, nil // another calltrail got there first
		}
		return "", err
	}
	return dir, nil
}

// Endpoint says when a build links the runtime's control endpoint,
// package live, into a program. The endpoint brings net/http and
// crypto/tls: in a program without them, it doubles the binary and its
// first build compiles them.
type Endpoint int

const (
	// EndpointAuto links the endpoint into programs that import
	// net/http already (services, which the endpoint is for), where it
	// costs little.
	EndpointAuto Endpoint = iota
	EndpointOn            // every program
	EndpointOff           // none
)

// links reports whether main package p gets the endpoint.
func (e Endpoint) links(p Package) bool {
	switch e {
	case EndpointOn:
		return true
	case EndpointAuto:
		return slices.Contains(p.Deps, "net/http")
	}
	return false
}

// LivePath is the import path of the runtime's control endpoint.
const LivePath = instrument.RuntimePath + "/live"

// ProfilesPath is the import path of the package that links the Go
// runtime's profiles into a traced program.
const ProfilesPath = instrument.RuntimePath + "/profiles"

// addProfiles links package profiles into the programs of the build: into
// each main package named on the command line, and, for tests, into the
// tests of each package tested. The runtime does not import it, so that a
// build that records no profiles does not compile runtime/pprof, and one
// that does compiles it beside the instrumented packages rather than
// before them.
func (b *Build) addProfiles(pkgs []Package, inCache func(string) bool, replace map[string]string) error {
	return b.linkInto(pkgs, inCache, replace, "calltrail_profiles_generated", ProfilesPath)
}

// linkInto links package path into the programs of the build, as
// addProfiles does package profiles, through files named after name.
func (b *Build) linkInto(pkgs []Package, inCache func(string) bool, replace map[string]string, name, path string) error {
	for _, p := range pkgs {
		if p.DepOnly || p.Standard || p.ImportPath == "command-line-arguments" || inCache(p.Dir) {
			continue // files named on the command line: see Prepare
		}
		var err error
		switch {
		case p.Name == "main":
			err = b.addImport(p.Dir, "main", name+".go", path, replace)
		case b.Tests && len(p.GoFiles)+len(p.CgoFiles)+len(p.TestGoFiles) == 0 && len(p.XTestGoFiles) > 0:
			// External tests alone: into their package. go list names
			// the package after them, and the name can be one no
			// package clause can say ("interface", of interface_test).
			err = b.addImport(p.Dir, p.Name+"_test", name+"_test.go", path, replace)
		case b.Tests && len(p.TestGoFiles)+len(p.XTestGoFiles) > 0:
			err = b.addImport(p.Dir, p.Name, name+"_test.go", path, replace)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// addImport adds to the package pkg in dir a file of the given name that
// imports path for its effects.
func (b *Build) addImport(dir, pkg, name, path string, replace map[string]string) error {
	dst := filepath.Join(b.Work, fmt.Sprintf("%d_%s", len(replace), name))
	src := fmt.Sprintf("// Code generated by calltrail build. DO NOT EDIT.\n\npackage %s\n\nimport _ %q\n", pkg, path)
	if err := os.WriteFile(dst, []byte(src), 0o644); err != nil {
		return err
	}
	replace[filepath.Join(dir, name)] = dst
	return nil
}

func containsPattern(patterns []string, importPath string) bool {
	for _, p := range patterns {
		if p == importPath || strings.HasPrefix(p, ".") || path.IsAbs(p) {
			return true
		}
	}
	return false
}

// hookSDK makes a build that links the OpenTelemetry SDK record its spans
// (see hookSpans): in a copy of its module when it comes from the module
// cache, as deps are instrumented, or through the overlay.
func (b *Build) hookSDK(pkgs, selected []Package, deps map[string]*depModule, inCache func(string) bool, replace map[string]string, st *Stats) error {
	i := slices.IndexFunc(pkgs, func(p Package) bool { return p.ImportPath == OTelSDK && p.Module != nil })
	if i < 0 {
		return nil
	}
	p := pkgs[i]
	if slices.ContainsFunc(selected, func(s Package) bool { return s.ImportPath == OTelSDK }) {
		st.NoSpans = "--pkgs traces " + OTelSDK + " itself"
		return nil
	}
	edits, why, err := hookSpans(p, instrument.RuntimePath)
	if err != nil || why != "" {
		st.NoSpans = why
		return err
	}
	st.Spans = true
	if !p.Module.Main && inCache(p.Dir) {
		d := deps[p.Module.Path]
		if d == nil {
			d = &depModule{path: p.Module.Path, version: p.Module.Version, dir: p.Module.Dir}
			deps[p.Module.Path] = d
		}
		d.hook = edits
		return nil
	}
	for path, src := range edits {
		dst := filepath.Join(b.Work, fmt.Sprintf("%d_%s", len(replace), filepath.Base(path)))
		if err := os.WriteFile(dst, src, 0o644); err != nil {
			return err
		}
		replace[path] = dst
	}
	return nil
}
