package gobuild

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The report compile (KeepInlined) needs the compiler's front end only:
// what it inlines and what escapes are decided, and said (-m prints each
// line as it is found), before the back end compiles the first function.
// The back end is most of a compile, and -m runs it on one core. So the
// go command runs the report's compiles through a wrapper, this program
// again (ServeReportCompile), which ends each when its back end starts and
// hands the go command, as the compile's output, the package file of the
// same package compiled without the report's flags (the user's plain
// build, most often found in the go command's cache): what the back end
// would have written but for the report's flags, which change no export
// data. The packages that import it are reported on against it, and the
// go command caches the report with it.

// exportsEnv names the environment variable that makes this program the
// compiler's wrapper, naming the file of the plain package files.
const exportsEnv = "CALLTRAIL_REPORT_EXPORTS"

// backEndFlag makes the compiler say when its back end starts: the time
// its first pass takes on each function (a required pass, first since
// Go 1.22), a line the wrapper waits for (backEndLine) and does not pass on.
const backEndFlag = "-d=ssa/number_lines/time"

var backEndLine = []byte("\tnumber_lines\tTIME(ns)\t")

// canWrap says the program called ServeReportCompile at its start, and so
// can be the compiler's wrapper.
var canWrap bool

// ServeReportCompile runs this process as the compiler's wrapper when the
// go command started it as one for KeepInlined, and exits. Otherwise it
// returns at once, and KeepInlined may use the program as the wrapper: a
// program calls it first thing in main (or TestMain).
func ServeReportCompile() {
	if exports, ok := os.LookupEnv(exportsEnv); ok && len(os.Args) > 1 {
		os.Exit(wrapTool(exports, os.Args[1], os.Args[2:]))
	}
	canWrap = true
}

// plainExport is a package file compiled without the report's flags.
type plainExport struct {
	Pkg    string   // the package path the compiler is given (-p)
	Files  []string // the Go files compiled, absolute
	Export string   // the package file
}

// wrapTool runs tool with args as the go command asked, ending it with
// its front end when it is a report compile with a plain package file
// to stand for its output.
func wrapTool(exports, tool string, args []string) int {
	if out, pkg, files, ok := reportArgs(tool, args); ok {
		return frontEnd(tool, args, out, func() ([]byte, bool) {
			plain := plainFor(exports, pkg, files, exportsWait)
			if plain == "" {
				return nil, false
			}
			return standIn(plain, args)
		})
	}
	cmd := exec.Command(tool, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return exitCode(cmd.Run())
}

// exportsWait bounds how long a compile waits for the plain package
// files, listed while the report's compiles run (see keepInlined): past
// it, as when calltrail was killed, it compiles on.
const exportsWait = 2 * time.Minute

// reportArgs returns, for a compile of the report asked with
// backEndFlag, its output file, package path and Go files, sorted; ok is
// false for any other run of a tool, for a compile that writes more than
// its package file (an assembly header, a linker object) or in a way not
// foreseen (a response file), and for one with a profile to guide it
// (-pgo), which plainExports cannot give it.
func reportArgs(tool string, args []string) (out, pkg string, files []string, ok bool) {
	if strings.TrimSuffix(filepath.Base(tool), ".exe") != "compile" || !slices.Contains(args, backEndFlag) {
		return "", "", nil, false
	}
	for i, a := range args {
		switch {
		case (a == "-o" || a == "-p") && i+1 < len(args):
			if a == "-o" {
				out = args[i+1]
			} else {
				pkg = args[i+1]
			}
		case a == "-asmhdr" || a == "-linkobj" || strings.HasPrefix(a, "-asmhdr=") || strings.HasPrefix(a, "-linkobj=") || strings.HasPrefix(a, "@"):
			return "", "", nil, false
		case strings.HasPrefix(a, "-pgoprofile"):
			// The profile is the main package's: compiled apart,
			// the package was compiled without it, and inlines more
			// or less.
			return "", "", nil, false
		case strings.HasSuffix(a, ".go") && !strings.HasPrefix(a, "-"):
			files = append(files, a)
		}
	}
	slices.Sort(files)
	return out, pkg, files, out != ""
}

// plainFor returns the plain package file of package pkg compiled from
// files that the file exports lists, "" for none. The file is written
// whole once the list is complete, and is empty before: plainFor waits
// up to wait for it.
func plainFor(exports, pkg string, files []string, wait time.Duration) string {
	var all []plainExport
	for deadline := time.Now().Add(wait); ; time.Sleep(5 * time.Millisecond) {
		data, err := os.ReadFile(exports)
		if err == nil && len(data) > 0 {
			if json.Unmarshal(data, &all) != nil {
				return ""
			}
			break
		}
		if time.Now().After(deadline) {
			return ""
		}
	}
	for _, e := range all {
		if e.Pkg == pkg && slices.Equal(e.Files, files) {
			return e.Export
		}
	}
	return ""
}

// standIn returns the plain package file, to stand for the output of the
// compile with args: with the build ID the go command gives that compile
// (-buildid) in place of its own, as the go command finds it there to
// replace it with one of the file's content, and caches the file only
// then. ok is false if the IDs differ in length, which the go command's
// IDs do not.
func standIn(plain string, args []string) (data []byte, ok bool) {
	data, err := os.ReadFile(plain)
	if err != nil {
		return nil, false
	}
	i := slices.Index(args, "-buildid")
	if i < 0 || i+1 == len(args) {
		return data, true // a build without IDs
	}
	const mark = "\nbuild id \""
	head := data[:min(len(data), 4096)]
	at := bytes.Index(head, []byte(mark))
	if at < 0 {
		return nil, false
	}
	id, _, found := bytes.Cut(head[at+len(mark):], []byte(`"`))
	want := []byte(args[i+1])
	if !found || len(id) == 0 || len(id) != len(want) {
		return nil, false
	}
	return bytes.ReplaceAll(data, id, want), true
}

// frontEnd runs the compile of tool and args, passing on what it prints
// but the back end's line, and, when its back end starts, ends it if
// standIn gives what its output, out, is to hold; else it compiles on. A
// compile that ends before (an error; no function to compile) ends as it
// does.
func frontEnd(tool string, args []string, out string, standIn func() ([]byte, bool)) int {
	cmd := exec.Command(tool, args...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	r := bufio.NewReader(stdout)
	asked := false
	for {
		line, err := r.ReadBytes('\n')
		if !bytes.Contains(line, backEndLine) {
			os.Stdout.Write(line)
		} else if !asked {
			asked = true
			if data, ok := standIn(); ok {
				cmd.Process.Kill()
				io.Copy(io.Discard, r)
				cmd.Wait()
				if err := os.WriteFile(out, data, 0o666); err != nil {
					return fail(err)
				}
				return 0
			}
		}
		if err != nil {
			break
		}
	}
	return exitCode(cmd.Wait())
}

// exitCode returns the exit code of a command that ended with err.
func exitCode(err error) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	}
	return fail(err)
}

// fail says what went wrong with the wrapper, for the go command to show.
func fail(err error) int {
	fmt.Fprintf(os.Stderr, "calltrail (the compiler's wrapper): %v\n", err)
	return 1
}

// libraries are the packages of q that others may import (not
// Commands).
func (q InlineQuery) libraries() []string {
	var out []string
	for _, p := range append(append([]string(nil), q.Packages...), q.Importers...) {
		if !slices.Contains(q.Commands, p) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// plainExports compiles the libraries of q as the user's build does,
// with flags and gcflags, from dir (the go command most often finds them
// in its cache), and writes where their package files are into the file
// exports, whole once complete: a list, empty if it fails.
func plainExports(dir string, q InlineQuery, flags, gcflags []string, exports string) {
	all, err := listExports(dir, q, flags, gcflags)
	if err != nil {
		all = nil
	}
	data, _ := json.Marshal(append([]plainExport{}, all...))
	tmp := exports + ".tmp"
	if os.WriteFile(tmp, data, 0o644) == nil {
		os.Rename(tmp, exports)
	}
}

// listExports lists the plain package files of q's libraries.
func listExports(dir string, q InlineQuery, flags, gcflags []string) ([]plainExport, error) {
	args := q.listArgs([]string{"-e", "-json=ImportPath,Name,Dir,GoFiles,CgoFiles,Export"}, flags, gcflags)
	cmd := exec.Command("go", append(append(args, "--"), q.libraries()...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), q.Env...)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %v", err)
	}
	var all []plainExport
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Name, Dir, Export string
			GoFiles, CgoFiles             []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		// A package with cgo compiles files cgo writes, elsewhere.
		if p.Export == "" || len(p.CgoFiles) > 0 {
			continue
		}
		e := plainExport{Pkg: basePath(p.ImportPath), Export: p.Export}
		if p.Name == "main" {
			e.Pkg = "main"
		}
		for _, f := range p.GoFiles {
			if !filepath.IsAbs(f) {
				f = filepath.Join(p.Dir, f)
			}
			e.Files = append(e.Files, f)
		}
		slices.Sort(e.Files)
		all = append(all, e)
	}
	return all, nil
}

// quoteArg quotes s as the go command splits the value of -toolexec: in
// single quotes, or double ones if it has a single quote; "" if it has
// both, which the go command cannot be given.
func quoteArg(s string) string {
	switch {
	case !strings.ContainsAny(s, " \t\n'\""):
		return s
	case !strings.Contains(s, "'"):
		return "'" + s + "'"
	case !strings.Contains(s, `"`):
		return `"` + s + `"`
	}
	return ""
}
