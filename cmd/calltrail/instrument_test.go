//go:build unix

package main

import (
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/calltrail/calltrail/instrument"
)

const oneLiners = `package main

import "sort"

type T struct{ n int }

func (t *T) inc() { t.n++ }

func main() {
	a := []int{3, 1, 2}
	sort.Slice(a, func(i, j int) bool { return a[i] < a[j] })
	println(a[0])
}
`

// instrumentModule writes a module of one package: main.go, a link to a
// file outside the module, and a read-only file.
func instrumentModule(t *testing.T) (dir string, files map[string]string) {
	t.Helper()
	root := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache")) // where the originals are kept
	dir = filepath.Join(root, "m")
	writeFiles(t, dir, map[string]string{
		"go.mod":  "module example.com/m\n\ngo 1.22\n",
		"main.go": oneLiners,
	})
	writeFiles(t, root, map[string]string{"shared/linked.go": "package main\n\nfunc linked() int { return 1 }\n"})
	if err := os.Symlink(filepath.Join(root, "shared", "linked.go"), filepath.Join(dir, "linked.go")); err != nil {
		t.Fatal(err)
	}
	return dir, map[string]string{"main.go": oneLiners, "linked.go": "package main\n\nfunc linked() int { return 1 }\n"}
}

// TestInstrumentInPlace writes in place as gofmt -w does: links stay
// links, files keep their mode and group, and a read-only file is
// refused, with every file left as it was.
func TestInstrumentInPlace(t *testing.T) {
	dir, files := instrumentModule(t)
	main := filepath.Join(dir, "main.go")
	if err := os.Chown(main, -1, 65534); err != nil {
		t.Skipf("cannot change a file's group here: %v", err)
	}
	os.Chmod(main, 0o640)
	chdir(t, dir)

	if code, _, stderr := runCmd("instrument", "-w", "--inlined", "."); code != 0 {
		t.Fatalf("instrument -w: exit %d, %s", code, stderr)
	}
	link := filepath.Join(dir, "linked.go")
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file")
	}
	if data, _ := os.ReadFile(link); !instrument.Instrumented(data) {
		t.Errorf("the link's target was not instrumented")
	}
	info, err := os.Stat(main)
	if err != nil {
		t.Fatal(err)
	}
	if st := info.Sys().(*syscall.Stat_t); st.Gid != 65534 || info.Mode().Perm() != 0o640 {
		t.Errorf("main.go: group %d and mode %v after -w, want 65534 and 0640", st.Gid, info.Mode().Perm())
	}

	if code, _, stderr := runCmd("instrument", "--undo", "-w", "."); code != 0 {
		t.Fatalf("instrument --undo -w: exit %d, %s", code, stderr)
	}
	for name, want := range files {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Errorf("%s after --undo:\n%s\nwant\n%s", name, got, want)
		}
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file by --undo")
	}

	// A read-only file: refused, and nothing written, in it or in any
	// other file.
	os.Chmod(main, 0o444)
	code, _, stderr := runCmd("instrument", "-w", "--inlined", ".")
	if code != 1 || !strings.Contains(stderr, "read-only") || !strings.Contains(stderr, "no file changed") {
		t.Errorf("instrument -w with a read-only file: exit %d, %q", code, stderr)
	}
	for name, want := range files {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Errorf("%s was changed, though main.go is read-only", name)
		}
	}
}

// TestUndoAfterGofmt instruments, formats the files as an editor does on
// saving, and undoes: the exact original comes back, one-line functions
// and all; with an edit of the user's besides, the edit stays.
func TestUndoAfterGofmt(t *testing.T) {
	dir, files := instrumentModule(t)
	chdir(t, dir)
	main := filepath.Join(dir, "main.go")
	gofmt := func(edit func(string) string) {
		t.Helper()
		data, _ := os.ReadFile(main)
		out, err := format.Source([]byte(edit(string(data))))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(main, out, 0o644)
	}
	same := func(s string) string { return s }
	for round, edit := range []func(string) string{same, func(s string) string { return strings.Replace(s, "println(a[0])", "println(a[1])", 1) }} {
		if code, _, stderr := runCmd("instrument", "-w", "--inlined", "."); code != 0 {
			t.Fatalf("instrument -w: exit %d, %s", code, stderr)
		}
		gofmt(edit)
		// Instrumented again, after the formatter, as an editor's
		// user does: the original is still the first one.
		if code, _, stderr := runCmd("instrument", "-w", "--inlined", "."); code != 0 {
			t.Fatalf("instrument -w again: exit %d, %s", code, stderr)
		}
		gofmt(same)
		code, _, stderr := runCmd("instrument", "--undo", "-w", ".")
		if code != 0 {
			t.Fatalf("round %d: --undo -w after gofmt: exit %d, %s", round, code, stderr)
		}
		// An edit before instrumenting again is the new original.
		if stderr != "" {
			t.Errorf("round %d: --undo said %q", round, stderr)
		}
		got, _ := os.ReadFile(main)
		want := edit(files["main.go"])
		switch {
		case round == 0 && string(got) != want:
			t.Errorf("after gofmt, --undo gave\n%s\nwant the original\n%s", got, want)
		case !instrument.SameSource(got, []byte(want)):
			t.Errorf("after an edit and gofmt, --undo gave\n%s\nwant, but for layout,\n%s", got, want)
		}
	}
}

// TestUndoSaysEdited: a file edited after instrumenting comes back with
// the edit, without the guards, and --undo says it is not the original
// it keeps, and where that is.
func TestUndoSaysEdited(t *testing.T) {
	dir, files := instrumentModule(t)
	chdir(t, dir)
	if code, _, stderr := runCmd("instrument", "-w", "--inlined", "."); code != 0 {
		t.Fatalf("instrument -w: exit %d, %s", code, stderr)
	}
	main := filepath.Join(dir, "main.go")
	data, _ := os.ReadFile(main)
	os.WriteFile(main, []byte(strings.Replace(string(data), "println(a[0])", "println(a[1])", 1)), 0o644)
	code, _, stderr := runCmd("instrument", "--undo", "-w", ".")
	if code != 0 || !strings.Contains(stderr, "main.go: the guards are out, but the file differs from its original beyond its layout") || !strings.Contains(stderr, "originals") {
		t.Errorf("--undo of an edited file: exit %d, %q", code, stderr)
	}
	if got, _ := os.ReadFile(main); string(got) != strings.Replace(files["main.go"], "println(a[0])", "println(a[1])", 1) {
		t.Errorf("--undo of an edited file gave\n%s", got)
	}
}

// TestInstrumentDiffPatches: -d writes a diff that patch applies, from
// the working directory, to give what -w writes; and --undo -d one that
// gives the original back: a file with a final newline, one without.
func TestInstrumentDiffPatches(t *testing.T) {
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a.go":   "package m\n\nfunc A() int { return 1 }\n\n// Note:\n//     indented\n",
		"b.go":   "package m\n\nfunc B() int {\n\treturn 2\n}",
	}
	root := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache"))
	patched, written := filepath.Join(root, "patched"), filepath.Join(root, "written")
	writeFiles(t, patched, files)
	writeFiles(t, written, files)
	apply := func(dir, diff string) {
		t.Helper()
		cmd := exec.Command("patch", "-s", "-p0")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(diff)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("patch: %v\n%s\n%s", err, out, diff)
		}
	}
	chdir(t, patched)
	code, diff, stderr := runCmd("instrument", "-d", "--inlined", "./...")
	if code != 0 || !strings.Contains(diff, "--- a.go\n") {
		t.Fatalf("instrument -d: exit %d, %s%s", code, diff, stderr)
	}
	apply(patched, diff)
	chdir(t, written)
	if code, _, stderr := runCmd("instrument", "-w", "--inlined", "./..."); code != 0 {
		t.Fatalf("instrument -w: exit %d, %s", code, stderr)
	}
	for _, name := range []string{"a.go", "b.go"} {
		p, _ := os.ReadFile(filepath.Join(patched, name))
		w, _ := os.ReadFile(filepath.Join(written, name))
		if string(p) != string(w) {
			t.Errorf("%s patched with -d's diff:\n%s\nwritten by -w:\n%s", name, p, w)
		}
	}
	code, diff, stderr = runCmd("instrument", "--undo", "-d", "./...")
	if code != 0 {
		t.Fatalf("--undo -d: exit %d, %s", code, stderr)
	}
	apply(written, diff)
	for _, name := range []string{"a.go", "b.go"} {
		if got, _ := os.ReadFile(filepath.Join(written, name)); string(got) != files[name] {
			t.Errorf("%s patched with --undo -d's diff:\n%q\nwant\n%q", name, got, files[name])
		}
	}
}

// TestUndoRefusesEdited refuses to undo a file whose guard was edited,
// and leaves every file as it was.
func TestUndoRefusesEdited(t *testing.T) {
	dir, _ := instrumentModule(t)
	chdir(t, dir)
	if code, _, stderr := runCmd("instrument", "-w", "--inlined", "."); code != 0 {
		t.Fatalf("instrument -w: exit %d, %s", code, stderr)
	}
	main := filepath.Join(dir, "main.go")
	data, _ := os.ReadFile(main)
	formatted, _ := format.Source(data)
	edited := strings.Replace(string(formatted), "defer __ct.Exit(c)", "defer __ct.Exit(c)\n\t\t\tprintln()", 1)
	os.WriteFile(main, []byte(edited), 0o644)
	linked, _ := os.ReadFile(filepath.Join(dir, "linked.go"))
	code, _, stderr := runCmd("instrument", "--undo", "-w", ".")
	if code != 1 || !strings.Contains(stderr, "edited by hand") || !strings.Contains(stderr, "no file changed") {
		t.Errorf("--undo of an edited guard: exit %d, %q", code, stderr)
	}
	if got, _ := os.ReadFile(main); string(got) != edited {
		t.Errorf("main.go changed")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "linked.go")); string(got) != string(linked) {
		t.Errorf("linked.go changed although main.go could not be undone")
	}
}

// chdir makes dir the working directory until the test ends.
func chdir(t *testing.T, dir string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(wd) })
}

// TestInstrumentTells checks what instrument says besides its work: the
// files it left alone for their build constraints, how to make go build
// find the runtime, and that packages of the Go distribution are not the
// user's to change.
func TestInstrumentTells(t *testing.T) {
	dir, _ := instrumentModule(t)
	writeFiles(t, dir, map[string]string{
		"other_windows.go": "package main\n\nfunc win() {}\n",
		"debug.go":         "//go:build debug\n\npackage main\n\nfunc debug() {}\n",
	})
	chdir(t, dir)
	code, _, stderr := runCmd("instrument", "-w", "--inlined", ".")
	if code != 0 || !strings.Contains(stderr, "left alone 2 files this build leaves out by their build constraints: debug.go, other_windows.go") {
		t.Errorf("instrument -w: exit %d, %q", code, stderr)
	}
	if !strings.Contains(stderr, "example.com/m does not require github.com/calltrail/calltrail") || !strings.Contains(stderr, "go mod edit -require=github.com/calltrail/calltrail@v0.0.0 -replace=") {
		t.Errorf("no advice on go.mod: %q", stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "debug.go")); instrument.Instrumented(data) {
		t.Errorf("debug.go instrumented without its tag")
	}
	if code, _, stderr := runCmd("instrument", "-w", "--inlined", "--tags", "debug", "."); code != 0 || !strings.Contains(stderr, "left alone 1 file this build") {
		t.Errorf("instrument --tags debug: exit %d, %q", code, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "debug.go")); !instrument.Instrumented(data) {
		t.Errorf("--tags debug left debug.go alone")
	}
	// The Go distribution's packages, named by pattern or by a file's
	// path (without -w: a failure here would print, not write).
	goroot := strings.TrimSpace(runGo(t, "env", "GOROOT"))
	for _, pkg := range []string{"encoding/json", "fmt", filepath.Join(goroot, "src", "strings", "compare.go")} {
		code, stdout, stderr := runCmd("instrument", "--inlined", pkg)
		if code != 1 || stdout != "" || !strings.Contains(stderr, "part of the Go distribution") {
			t.Errorf("instrument %s: exit %d, %d bytes out, %q", pkg, code, len(stdout), stderr)
		}
	}
	// The module cache's, by a file's path, and by ./... run inside
	// it, where the go command takes the module for the main one:
	// golang.org/x/tools, which calltrail itself builds with.
	modcache := strings.TrimSpace(runGo(t, "env", "GOMODCACHE"))
	cached, _ := filepath.Glob(filepath.Join(modcache, "golang.org", "x", "tools@*", "go", "ast", "astutil", "util.go"))
	if len(cached) == 0 {
		t.Fatalf("no golang.org/x/tools in the module cache %s", modcache)
	}
	code, stdout, stderr := runCmd("instrument", "-l", "--inlined", cached[0])
	if code != 1 || stdout != "" || !strings.Contains(stderr, "in the module cache, not yours to change") {
		t.Errorf("instrument -l %s: exit %d, %q, %q", cached[0], code, stdout, stderr)
	}
	// A directory of it by its path, with /... or without, from the
	// module here, where go list says only that it is outside the main
	// module.
	for _, pattern := range []string{filepath.Dir(cached[0]) + "/...", filepath.Dir(cached[0])} {
		code, stdout, stderr = runCmd("instrument", "-l", "--inlined", pattern)
		if code != 1 || stdout != "" || !strings.Contains(stderr, "in the module cache, not yours to change") {
			t.Errorf("instrument -l %s: exit %d, %q, %q", pattern, code, stdout, stderr)
		}
	}
	chdir(t, filepath.Dir(cached[0]))
	code, stdout, stderr = runCmd("instrument", "-l", "--inlined", "./...")
	if code != 1 || stdout != "" || !strings.Contains(stderr, "in the module cache, not yours to change") {
		t.Errorf("instrument -l ./... in the module cache: exit %d, %q, %q", code, stdout, stderr)
	}
}

// TestInstrumentSyntaxError: a file that does not parse gets the
// parser's error, with its position, the file named from the working
// directory as the go command names it, and no advice to instrument every
// function instead, which would fail the same way; nothing is written.
func TestInstrumentSyntaxError(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	src := "package s\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B( {\n}\n"
	writeFiles(t, dir, map[string]string{"go.mod": "module example.com/s\n\ngo 1.22\n", "s.go": src})
	chdir(t, dir)
	for _, arg := range []string{"./s.go", "./..."} {
		code, _, stderr := runCmd("instrument", "-w", arg)
		if code != 1 || !regexp.MustCompile(`^calltrail: (\./)?s\.go:7:9: expected '\)'`).MatchString(stderr) || strings.Contains(stderr, "--inlined") {
			t.Errorf("instrument -w %s: exit %d, %q", arg, code, stderr)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "s.go")); string(got) != src {
		t.Errorf("s.go changed")
	}
}

// runGo runs the go command, failing the test if it fails.
func runGo(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// TestNoOriginalsKept: where the cache directory cannot keep the
// originals, instrument -w still instruments, and says that --undo will
// not give back the exact original after a formatter.
func TestNoOriginalsKept(t *testing.T) {
	dir, _ := instrumentModule(t)
	chdir(t, dir)
	t.Setenv("GOCACHE", strings.TrimSpace(runGo(t, "env", "GOCACHE")))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "main.go", "cache")) // under a file: unusable
	code, _, stderr := runCmd("instrument", "-w", "--inlined", ".")
	if code != 0 || !strings.Contains(stderr, "the originals of the files changed are not kept") {
		t.Errorf("instrument -w without a cache: exit %d, %q", code, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "main.go")); !instrument.Instrumented(data) {
		t.Errorf("main.go was not instrumented")
	}
}

// TestUndoTakesTests: --undo takes the guards out of _test.go files too,
// without --tests: left in, they would import the runtime that go.mod
// no longer requires once the user has taken it out.
func TestUndoTakesTests(t *testing.T) {
	dir, files := instrumentModule(t)
	test := "package main\n\nimport \"testing\"\n\nfunc TestInc(t *testing.T) { (&T{}).inc() }\n"
	writeFiles(t, dir, map[string]string{"main_test.go": test})
	files["main_test.go"] = test
	chdir(t, dir)
	if code, _, stderr := runCmd("instrument", "-w", "--tests", "--inlined", "./..."); code != 0 {
		t.Fatalf("instrument -w --tests: exit %d, %s", code, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "main_test.go")); !instrument.Instrumented(data) {
		t.Fatal("main_test.go was not instrumented")
	}
	if code, _, stderr := runCmd("instrument", "--undo", "-w", "./..."); code != 0 {
		t.Fatalf("instrument --undo -w: exit %d, %s", code, stderr)
	}
	for name, want := range files {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Errorf("%s after --undo without --tests:\n%s\nwant\n%s", name, got, want)
		}
	}
}
