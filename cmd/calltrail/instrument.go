package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/scanner"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/calltrail/calltrail"
	"github.com/calltrail/calltrail/instrument"
	"github.com/calltrail/calltrail/internal/gobuild"
)

func instrumentVerb() *verb {
	var (
		write, list, diff, undo, tests, inlined bool
		errs                                    bool
		funcs, exclude, tags, values            string
	)
	return &verb{
		name:    "instrument",
		args:    "[-w | -l | -d] [--undo] [--tests] [--tags TAGS] [--funcs REGEX] [--exclude REGEX] [--errors] [--args REGEX] [--inlined] PATH...",
		summary: "put the tracing guard into every function of Go files, or take it out (--undo)",
		flags: func(fs *flag.FlagSet) {
			write, list, diff, undo, tests, inlined, funcs, exclude, tags, values = false, false, false, false, false, false, "", "", "", ""
			fs.BoolVar(&write, "w", false, "write the result to the files instead of printing it")
			fs.BoolVar(&list, "l", false, "list the files that would change")
			fs.BoolVar(&diff, "d", false, "print a diff of the changes")
			fs.BoolVar(&undo, "undo", false, "remove calltrail's instrumentation, giving back the original source")
			fs.BoolVar(&tests, "tests", false, "instrument _test.go files too (--undo takes the guards out of them whatever it says)")
			fs.StringVar(&tags, "tags", "", "choose files by the build tags `TAGS` (a,b), as go build -tags does")
			fs.StringVar(&funcs, "funcs", "", "instrument only functions whose name matches `REGEX`")
			fs.StringVar(&exclude, "exclude", "", "leave out functions whose name matches `REGEX`")
			fs.BoolVar(&errs, "errors", true, "record the error each call of a function with an error result returns, its type and message (--errors=false to leave them out)")
			fs.StringVar(&values, "args", "", "record the arguments and results of functions whose name matches `REGEX`")
			fs.BoolVar(&inlined, "inlined", false, "trace the functions kept inlined by default, whose inlining keeps a value off the heap, too")
		},
		run: func(sess *session, _ *flag.FlagSet, args []string) error {
			if len(args) == 0 {
				return usageError{"name the files, directories or packages (./...) to instrument"}
			}
			if n := count(write, list, diff); n > 1 {
				return usageError{"-w, -l and -d do not go together"}
			}
			opts := instrument.Options{}
			var err error
			if funcs != "" {
				if opts.Funcs, err = regexp.Compile(funcs); err != nil {
					return usageError{fmt.Sprintf("--funcs: %v", err)}
				}
			}
			if exclude != "" {
				if opts.Exclude, err = regexp.Compile(exclude); err != nil {
					return usageError{fmt.Sprintf("--exclude: %v", err)}
				}
			}
			opts.Errors = errs
			if values != "" {
				if opts.Args, err = regexp.Compile(values); err != nil {
					return usageError{fmt.Sprintf("--args: %v", err)}
				}
			}
			var flags []string
			if tags != "" {
				flags = []string{"-tags=" + tags}
			}
			// --undo takes the guards out of every file, _test.go files
			// too, whatever --tests: left in, they would import the
			// runtime that go.mod then no longer requires.
			files, ignored, err := gobuild.SourceFiles(args, flags, tests || undo)
			if err != nil {
				return shownError(err, "")
			}
			if !undo && !inlined {
				if opts.KeepInlined, err = gobuild.InlinedIn(files, flags, tests); err != nil {
					return shownError(err, "")
				}
			}
			// Every file first, then the writes: a file that cannot be
			// done leaves all of them as they were.
			type result struct {
				path      string
				src, res  []byte
				orig      []byte // the original, to keep for --undo
				undoneOrg bool   // res is the original kept when instrumenting
				notOrig   bool   // res is not the original kept, which differs beyond layout
			}
			var results []result
			var errs []string
			inits := map[string]int{} // by package: see instrument.Options.Inits
			for _, f := range files {
				src, err := os.ReadFile(f.Path)
				if err != nil {
					return err
				}
				r := result{path: f.Path, src: src}
				if undo {
					if r.res, err = instrument.Undo(src); err != nil {
						errs = append(errs, fmt.Sprintf("%s: %v", shownName(f.Path), err))
						continue
					}
					if orig, ok := originalFiles.Load(f.Path); ok && instrument.SameSource(orig, r.res) {
						r.res, r.undoneOrg = orig, true
					} else if ok && !bytes.Equal(orig, r.res) {
						r.notOrig = true
					}
				} else {
					o := opts
					o.Package = f.Pkg
					o.Inits = inits[f.Pkg]
					ir, err := instrument.File(f.Path, src, o)
					inits[f.Pkg] += ir.Inits
					if err != nil {
						errs = append(errs, shownError(err, f.Path).Error())
						continue
					}
					r.res = ir.Src
					if r.orig, err = instrument.Undo(src); err != nil {
						return err // File undid it already
					}
					// Instrumented again, after a formatter perhaps: the
					// original kept the first time stays the original.
					if kept, ok := originalFiles.Load(f.Path); ok && !bytes.Equal(r.orig, src) && instrument.SameSource(kept, r.orig) {
						r.orig = kept
					}
				}
				results = append(results, r)
			}
			if write {
				// Every file is written, or none: one that cannot be
				// is found before any is.
				for _, r := range results {
					if _, err := rewritable(r.path); err != nil && !bytes.Equal(r.src, r.res) {
						errs = append(errs, err.Error())
					}
				}
			}
			if len(errs) > 0 {
				return fmt.Errorf("%s; no file changed", strings.Join(errs, "; "))
			}
			warned := false // that the originals cannot be kept: said once
			for _, r := range results {
				changed := !bytes.Equal(r.src, r.res)
				switch {
				case list:
					if changed {
						fmt.Fprintln(sess.out, shownName(r.path))
					}
				case diff:
					if changed {
						sess.out.Write(lineDiff(shownName(r.path), r.src, r.res))
					}
				case write:
					if !changed {
						continue
					}
					if !undo {
						// Kept so that --undo can give back the exact
						// original after a formatter has moved the
						// instrumentation.
						if err := originalFiles.Save(r.path, r.orig); err != nil && !warned {
							fmt.Fprintf(sess.errOut, "calltrail: the originals of the files changed are not kept (%v): --undo gives them back exactly only if no formatter runs over them first\n", err)
							warned = true
						}
					}
					if err := rewrite(r.path, r.res); err != nil {
						return err
					}
					switch {
					case undo && r.notOrig:
						// Kept, for the user to compare: what came out
						// differs from it by more than the layout.
						where, _ := originalFiles.Path(r.path)
						fmt.Fprintf(sess.errOut, "calltrail: %s: the guards are out, but the file differs from its original beyond its layout (edited since, or a formatter rewrote a comment); the original is kept in %s\n", r.path, where)
					case undo:
						originalFiles.Remove(r.path)
					}
				default:
					sess.out.Write(r.res)
				}
			}
			for _, r := range results {
				if write && !undo && !bytes.Equal(r.src, r.res) {
					sess.adviseRequire(filepath.Dir(r.path))
					break
				}
			}
			if len(ignored) > 0 {
				names := make([]string, 0, 3)
				for _, p := range ignored[:min(3, len(ignored))] {
					names = append(names, shownName(p)) // from here: two packages may have files of one name
				}
				more := ""
				if len(ignored) > 3 {
					more = fmt.Sprintf(" and %d more", len(ignored)-3)
				}
				fmt.Fprintf(sess.errOut, "calltrail: left alone %s this build leaves out by their build constraints: %s%s (--tags chooses others)\n", plural(len(ignored), "file"), strings.Join(names, ", "), more)
			}
			return nil
		},
	}
}

func count(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// lineDiff is a unified diff of two versions of a file whose lines
// correspond one to one, as instrumenting keeps them, but for lines added
// at the end.
func lineDiff(name string, a, b []byte) []byte {
	al, aNoEOL := diffLines(a)
	bl, bNoEOL := diffLines(b)
	var d bytes.Buffer
	fmt.Fprintf(&d, "--- %s\n+++ %s (calltrail)\n", name, name)
	// line writes line i of ls with prefix, and the marker patch wants
	// after a last line without its newline.
	line := func(prefix string, ls []string, i int, noEOL bool) {
		d.WriteString(prefix + ls[i] + "\n")
		if noEOL && i == len(ls)-1 {
			d.WriteString("\\ No newline at end of file\n")
		}
	}
	// Lines that correspond one to one, each its own hunk; then the rest
	// of either file in one, with the last line they share if its
	// newline at the end comes or goes (patch wants that in one hunk).
	common := min(len(al), len(bl))
	tail := common
	if common > 0 && len(al) != len(bl) && (aNoEOL && common == len(al)) != (bNoEOL && common == len(bl)) {
		tail--
	}
	for i := 0; i < tail; i++ {
		if al[i] == bl[i] {
			continue // neither is a last line without its newline: that one is in the tail
		}
		fmt.Fprintf(&d, "@@ -%d +%d @@\n", i+1, i+1)
		line("-", al, i, aNoEOL)
		line("+", bl, i, bNoEOL)
	}
	if tail < len(al) || tail < len(bl) {
		// A range of no lines starts at the line before it.
		at := func(n int) int {
			if n == 0 {
				return tail
			}
			return tail + 1
		}
		na, nb := len(al)-tail, len(bl)-tail
		fmt.Fprintf(&d, "@@ -%d,%d +%d,%d @@\n", at(na), na, at(nb), nb)
		for i := tail; i < len(al); i++ {
			line("-", al, i, aNoEOL)
		}
		for i := tail; i < len(bl); i++ {
			line("+", bl, i, bNoEOL)
		}
	}
	return d.Bytes()
}

// shownError is err with the files of a parser's error list, or the
// file its message begins with (path, or any absolute path when path is
// ""), named as shownName names them, as the go command names them in
// its errors.
func shownError(err error, path string) error {
	list, ok := err.(scanner.ErrorList)
	if !ok {
		file, rest, ok := strings.Cut(err.Error(), ": ")
		if ok && (file == path || path == "" && filepath.IsAbs(file)) {
			return fmt.Errorf("%s: %s", shownName(file), rest)
		}
		return err
	}
	for _, e := range list {
		e.Pos.Filename = shownName(e.Pos.Filename)
	}
	return list
}

// shownName names a file in a diff or a message: by its path from the working
// directory when it is under it, as patch -p0 takes it there (patch
// refuses an absolute path), else as it is.
func shownName(path string) string {
	if wd, err := os.Getwd(); err == nil && filepath.IsAbs(path) {
		if rel, err := filepath.Rel(wd, path); err == nil && filepath.IsLocal(rel) {
			return rel
		}
	}
	return path
}

// diffLines splits a file into its lines, without their newlines, and
// says whether the last one has none.
func diffLines(b []byte) (lines []string, noEOL bool) {
	if len(b) == 0 {
		return nil, false
	}
	s := string(b)
	noEOL = !strings.HasSuffix(s, "\n")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n"), noEOL
}

// adviseRequire tells how to build the instrumented files with the go
// command when the module in dir does not require the runtime they now
// import.
func (sess *session) adviseRequire(dir string) {
	cmd := exec.Command("go", "list", "-m", instrument.RuntimePath)
	cmd.Dir = dir
	if cmd.Run() == nil {
		return // required, or the runtime's own module
	}
	cmd = exec.Command("go", "list", "-m")
	cmd.Dir = dir
	mod, err := cmd.Output()
	if err != nil {
		return // not a module: nothing to advise
	}
	rt, err := gobuild.RuntimeModule(calltrail.Source())
	if err != nil {
		return
	}
	fmt.Fprintf(sess.errOut, "calltrail: %s does not require %s, which the instrumented files import: go build fails until it does. This calltrail's runtime is in %s:\n\tgo mod edit -require=%[2]s@v0.0.0 -replace=%[2]s=%[3]s\n(calltrail build, run and test need no change to go.mod.)\n",
		strings.TrimSpace(string(mod)), instrument.RuntimePath, rt)
}

// plural says n things: "1 file", "2 files".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
