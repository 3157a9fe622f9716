//go:build unix

package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/clitest"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/tracefile"
)

// module writes a small module with a program and a test into a fresh
// directory, makes it the working directory, and returns it with the
// bytes of every file, to check calltrail changes none of them.
func module(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{
		"go.mod": []byte("module example.com/app\n\ngo 1.22\n"),
		"main.go": []byte(`package main

import (
	"fmt"
	"os"
)

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func main() {
	fmt.Println(fib(10), os.Args[1:])
	os.Exit(3)
}
`),
		"main_test.go": []byte(`package main

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(m.Run()) }

func TestFib(t *testing.T) {
	if fib(10) != 55 {
		t.Fatal("fib")
	}
}
`),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wd, _ := os.Getwd()
	os.Chdir(dir)
	t.Cleanup(func() { os.Chdir(wd) })
	return dir, files
}

func unchanged(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s changed (%v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "go.sum")); err == nil {
		t.Error("go.sum created")
	}
}

func readSummary(t *testing.T, path string) tracefile.Summary {
	t.Helper()
	f, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r := f.Reader
	defer f.Close()
	s, err := tracefile.Summarize(r)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRunInitNames runs a program with init functions in two files: each
// is its own function in the trace, named as the runtime names it, as Go
// numbers them across the package's files.
func TestRunInitNames(t *testing.T) {
	dir := t.TempDir()
	named := "func name() string {\n\tpc, _, _, _ := runtime.Caller(1)\n\treturn runtime.FuncForPC(pc).Name()\n}\n"
	writeFiles(t, dir, map[string]string{
		"go.mod": "module example.com/inits\n\ngo 1.22\n",
		"a.go":   "package main\n\nimport (\n\t\"fmt\"\n\t\"runtime\"\n)\n\nvar names []string\n\n" + named + "\nfunc init() { names = append(names, name()) }\n\nfunc main() { fmt.Println(names) }\n",
		"b.go":   "package main\n\nfunc init() { names = append(names, name()) }\n\nfunc init() { names = append(names, name()) }\n",
	})
	chdir(t, dir)
	code, stdout, stderr := runCmd("run", "--inlined", "-o", "t.out", ".")
	if code != 0 || stdout != "[main.init.0 main.init.1 main.init.2]\n" {
		t.Fatalf("calltrail run: exit %d, printed %q\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCmd("report", "--json", "t.out")
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	var rep struct {
		Functions []struct {
			Name  string
			Calls uint64
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	inits := map[string]uint64{}
	for _, f := range rep.Functions {
		if strings.Contains(f.Name, "init") {
			inits[f.Name] = f.Calls
		}
	}
	if want := map[string]uint64{"main.init.0": 1, "main.init.1": 1, "main.init.2": 1}; !reflect.DeepEqual(inits, want) {
		t.Errorf("init functions in the trace %v, want %v", inits, want)
	}
	// instrument names them the same in the source.
	if code, stdout, stderr := runCmd("instrument", "-d", "--inlined", "."); code != 0 || !strings.Contains(stdout, `{Name: "main.init.1", File: "b.go"`) || !strings.Contains(stdout, `{Name: "main.init.2", File: "b.go"`) {
		t.Errorf("instrument -d: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestRunOddSources runs a program whose files go build takes but that
// are unusual: one opens with a byte-order mark, one holds code a
// generator wrote, with //line directives naming its source. The trace
// places functions where the runtime would: in the generator's source.
func TestRunOddSources(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":  "module example.com/odd\n\ngo 1.22\n",
		"main.go": "\ufeffpackage main\n\nfunc main() { println(parse(\"x\")) }\n",
		"gen.go":  "package main\n\n//line grammar.y:40\nfunc parse(s string) int {\n\treturn len(s)\n}\n",
	})
	chdir(t, dir)
	if code, _, stderr := runCmd("run", "--inlined", "-o", "t.out", "."); code != 0 {
		t.Fatalf("calltrail run: exit %d\n%s", code, stderr)
	}
	f, err := tracefile.Open("t.out")
	if err != nil {
		t.Fatal(err)
	}
	r := f.Reader
	defer f.Close()
	tracefile.Summarize(r)
	found := false
	for id := uint32(1); int(id) <= r.NumFuncs(); id++ {
		if fn := r.Func(id); fn.Name == "main.parse" {
			found = true
			if want := filepath.Join(dir, "grammar.y"); fn.File != want || fn.Line != 40 {
				t.Errorf("main.parse at %s:%d, want %s:40", fn.File, fn.Line, want)
			}
		}
	}
	if !found {
		t.Error("main.parse not in the trace")
	}
}

func TestRun(t *testing.T) {
	dir, files := module(t)
	code, stdout, stderr := runCmd("run", "-o", "t.out", ".", "a", "b")
	if code != 3 {
		t.Fatalf("exit %d, want the program's 3; stderr:\n%s", code, stderr)
	}
	if stdout != "55 [a b]\n" {
		t.Errorf("program printed %q", stdout)
	}
	if !strings.Contains(stderr, "calltrail: 2 functions instrumented in 1 package") || !strings.Contains(stderr, "calltrail replay t.out") {
		t.Errorf("summary:\n%s", stderr)
	}
	s := readSummary(t, "t.out")
	if s.Calls != 178 || s.End != "exit" { // main, and fib(10) makes 177 calls
		t.Errorf("trace: %d calls, end %q; want 178, exit", s.Calls, s.End)
	}
	unchanged(t, dir, files)

	// Without -o, the trace goes where CALLTRAIL_OUT says, as the
	// program itself would write it.
	t.Setenv("CALLTRAIL_OUT", "env.out")
	if code, _, stderr := runCmd("run", ".", "a"); code != 3 || !strings.Contains(stderr, "calltrail replay env.out") {
		t.Fatalf("exit %d, want the program's 3, and the trace in env.out; stderr:\n%s", code, stderr)
	}
	if s := readSummary(t, "env.out"); s.Calls != 178 {
		t.Errorf("env.out: %d calls, want 178", s.Calls)
	}
	if _, err := os.Stat("calltrail.out"); err == nil {
		t.Error("calltrail.out written though CALLTRAIL_OUT names another file")
	}
	// A directory, where the program would name its trace itself, is
	// refused before building; a file not a trace is named as the
	// variable names it.
	os.WriteFile("notes.txt", []byte("not a trace\n"), 0o644)
	for env, want := range map[string]string{
		"traces/":   "CALLTRAIL_OUT=traces/ names a directory",
		".":         "CALLTRAIL_OUT=. names a directory",
		"main.go":   "CALLTRAIL_OUT=main.go: that is the name of Go source",
		"notes.txt": "CALLTRAIL_OUT=notes.txt: the file is there and is not a calltrail trace",
		"no/such/x": "CALLTRAIL_OUT=no/such/x:",
	} {
		t.Setenv("CALLTRAIL_OUT", env)
		if code, _, stderr := runCmd("run", ".", "a"); code == 0 || code == 3 || !strings.Contains(stderr, want) {
			t.Errorf("CALLTRAIL_OUT=%s: exit %d, stderr %q; want %q", env, code, stderr, want)
		}
	}
	unchanged(t, dir, files)
}

func TestBuild(t *testing.T) {
	dir, files := module(t)
	bin := filepath.Join(t.TempDir(), "app")
	if code, _, stderr := runCmd("build", "-o", bin, "."); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	trace := filepath.Join(t.TempDir(), "trace.out")
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "CALLTRAIL_OUT="+trace)
	cmd.Run()
	if s := readSummary(t, trace); s.Calls != 178 {
		t.Errorf("%d calls, want 178", s.Calls)
	}
	unchanged(t, dir, files)
	// Nor does the binary replace Go source, there or not.
	for _, out := range []string{"go.mod", "main.go", "new.go"} {
		if code, _, stderr := runCmd("build", "-o", out, "."); code != 2 || !strings.Contains(stderr, "that is the name of Go source") {
			t.Errorf("build -o %s: exit %d, %q", out, code, stderr)
		}
	}
	unchanged(t, dir, files)

	// A compile error names the user's file and line.
	os.WriteFile("bad.go", []byte("package main\n\nfunc broken() int {\n\treturn \"x\"\n}\n"), 0o644)
	code, _, stderr := runCmd("build", "-o", bin, ".")
	if code != 1 || !strings.Contains(stderr, "bad.go:4") || strings.Contains(stderr, "calltrail-build") {
		t.Errorf("exit %d, stderr %q; want the compiler's error at bad.go:4", code, stderr)
	}
}

func TestTest(t *testing.T) {
	dir, files := module(t)
	code, stdout, stderr := runCmd("test", "-o", "traces", "-count=1", ".")
	if code != 0 || !strings.Contains(stdout, "ok  \texample.com/app") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, filepath.Join("traces", "app.test.trace"))
	if s.End != "exit" || s.Calls < 178 { // TestFib's fib(10), and more
		t.Errorf("trace: %d calls, end %q", s.Calls, s.End)
	}
	unchanged(t, dir, files)

	// Without -o, into the directory CALLTRAIL_OUT names; a file there
	// is the test binaries' to overwrite one by one, not taken.
	t.Setenv("CALLTRAIL_OUT", "envtraces/")
	if code, stdout, stderr := runCmd("test", "-count=1", "."); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if s := readSummary(t, filepath.Join("envtraces", "app.test.trace")); s.Calls < 178 {
		t.Errorf("envtraces/app.test.trace: %d calls", s.Calls)
	}
	t.Setenv("CALLTRAIL_OUT", "one.trace")
	if code, stdout, stderr := runCmd("test", "-count=1", "."); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join("calltrail-traces", "app.test.trace")); err != nil {
		t.Errorf("with CALLTRAIL_OUT naming a file, no trace in calltrail-traces: %v", err)
	}
}

// TestTestFlagsAfterPackages: flags after the packages go to go test and
// the test binaries, as with go test: go test's own (-run, -v), those
// that choose the files built (-tags, which calltrail's instrumenting
// must see too), and the binary's after -args.
func TestTestFlagsAfterPackages(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":        "module example.com/m\n\ngo 1.22\n",
		"a.go":          "package m\n\nfunc Add(a, b int) int { return a + b }\n",
		"a_test.go":     "package m\n\nimport (\n\t\"flag\"\n\t\"testing\"\n)\n\nvar update = flag.Bool(\"update\", false, \"\")\n\nfunc TestAdd(t *testing.T) { t.Log(\"update\", *update, Add(1, 2)) }\n\nfunc TestOther(t *testing.T) { t.Log(\"other\") }\n",
		"extra_test.go": "//go:build extra\n\npackage m\n\nimport \"testing\"\n\nfunc TestExtra(t *testing.T) { t.Log(\"extra\", Add(2, 2)) }\n",
	})
	chdir(t, dir)
	code, stdout, stderr := runCmd("test", "-o", "one", ".", "-run", "TestAdd", "-v", "-args", "-update")
	if code != 0 || !strings.Contains(stdout, "update true 3") || strings.Contains(stdout, "other") {
		t.Fatalf("test . -run TestAdd -v -args -update: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCmd("test", "-o", "two", ".", "-tags", "extra", "-run=Extra", "-v")
	if code != 0 || !strings.Contains(stdout, "extra 4") {
		t.Fatalf("test . -tags extra -run=Extra -v: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runCmd("chains", "example.com/m.TestExtra", filepath.Join("two", "m.test.trace")); code != 0 || !strings.Contains(stdout, "1 call,") {
		t.Errorf("chains TestExtra: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestSplitTestArgs: what calltrail test passes on, and where.
func TestSplitTestArgs(t *testing.T) {
	for _, tt := range []struct {
		args                     []string
		packages, building, tail []string
	}{
		{[]string{"./..."}, []string{"./..."}, nil, nil},
		{[]string{"./a", "./b", "-v", "-run", "-tags"}, []string{"./a", "./b"}, nil, []string{"-v", "-run", "-tags"}},
		{[]string{".", "-tags", "x", "-race", "-count=2", "-gcflags=-N"}, []string{"."}, []string{"-tags", "x", "-race", "-gcflags=-N"}, []string{"-count=2"}},
		{[]string{".", "-args", "-tags", "x"}, []string{"."}, nil, []string{"-args", "-tags", "x"}},
		{[]string{"-v"}, []string{}, nil, []string{"-v"}},
	} {
		p, b, tail := splitTestArgs(tt.args)
		if fmt.Sprint(p, b, tail) != fmt.Sprint(tt.packages, tt.building, tt.tail) {
			t.Errorf("splitTestArgs(%q) = %q, %q, %q; want %q, %q, %q", tt.args, p, b, tail, tt.packages, tt.building, tt.tail)
		}
	}
}

// TestTestImports: calltrail test traces the main module's packages that
// only the tests import, b, and c, which imports the package tested and
// so is compiled again for its tests; and it runs the tests each time, a
// result from go test's cache writing no trace.
func TestTestImports(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.22\n",
		"a/a.go":      "package a\n\nfunc A() int { return 1 }\n",
		"b/b.go":      "package b\n\nfunc B() int { return 2 }\n\nfunc Unused() int { return 0 }\n",
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) { B() }\n",
		"c/c.go":      "package c\n\nimport \"example.com/m/a\"\n\nfunc C() int { return a.A() + 3 }\n",
		"a/a_test.go": "package a_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/m/b\"\n\t\"example.com/m/c\"\n)\n\nfunc TestBC(t *testing.T) {\n\tif b.B()+c.C() != 6 {\n\t\tt.Fatal(\"sum\")\n\t}\n}\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	chdir(t, dir)
	for run := 1; run <= 2; run++ {
		if code, stdout, stderr := runCmd("test", "-o", "traces", "./a"); code != 0 || strings.Contains(stdout, "(cached)") {
			t.Fatalf("run %d: exit %d\n%s\n%s", run, code, stdout, stderr)
		}
	}
	for _, trace := range []string{"a.test.trace", "a.test.2.trace"} {
		trace = filepath.Join("traces", trace)
		for _, fn := range []string{"example.com/m/b.B", "example.com/m/c.C", "example.com/m/a.A"} {
			if code, stdout, stderr := runCmd("chains", fn, trace); code != 0 || !strings.Contains(stdout, "TestBC") {
				t.Errorf("chains %s %s: exit %d\n%s%s", fn, trace, code, stdout, stderr)
			}
		}
		// b has tests of its own, not compiled into a's: what was
		// traced of b is registered by b.go all the same.
		if code, _, stderr := runCmd("chains", "example.com/m/b.Unused", trace); code == 0 || !strings.Contains(stderr, "traced, but was not called") {
			t.Errorf("chains b.Unused %s: exit %d, %s", trace, code, stderr)
		}
		if code, stdout, stderr := runCmd("replay", "-F", `b\.B$`, trace); code != 0 || !strings.Contains(stdout, "example.com/m/b.B") {
			t.Errorf("replay -F b.B %s: exit %d\n%s%s", trace, code, stdout, stderr)
		}
	}
}

// TestOnlyExternalTests tests a directory that holds external tests
// only, named by a Go keyword (expr-lang/expr's test/interface): go list
// names its package "interface", which no package clause can say, so
// what calltrail links into its tests goes into the external test
// package, "interface_test".
func TestOnlyExternalTests(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":              "module example.com/m\n\ngo 1.22\n",
		"lib/lib.go":          "package lib\n\nfunc Twice(n int) int { return 2 * n }\n",
		"interface/a_test.go": "package interface_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/m/lib\"\n)\n\nfunc TestTwice(t *testing.T) {\n\tif lib.Twice(2) != 4 {\n\t\tt.Fatal(\"twice\")\n\t}\n}\n",
	})
	chdir(t, dir)
	if code, stdout, stderr := runCmd("test", "-o", "traces", "./..."); code != 0 {
		t.Fatalf("calltrail test: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runCmd("chains", "example.com/m/lib.Twice", filepath.Join("traces", "interface.test.trace")); code != 0 || !strings.Contains(stdout, "TestTwice") {
		t.Errorf("chains lib.Twice: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestTestPackageThatDoesNotBuild: as go test does, calltrail test tests
// every package that builds, traced, and says which did not build (type
// errors, syntax errors) and why (samber/lo v1.53.0's tests, as the module proxy serves them, build
// in one package of three).
func TestTestPackageThatDoesNotBuild(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.22\n",
		"a/a.go":      "package a\n\nfunc A() int { return 1 }\n",
		"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tif A() != 1 {\n\t\tt.Fatal(\"A\")\n\t}\n}\n",
		"b/b.go":      "package b\n\nfunc B() int { return 2 }\n",
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) { _ = helper() }\n",
		"c/c_test.go": "package c\n\nimport \"testing\"\n\nfunc TestC(t *testing.T) { x := }\n",
	})
	chdir(t, dir)
	code, stdout, stderr := runCmd("test", "-o", "traces", "./...")
	if code != 1 || !strings.Contains(stdout, "ok  \texample.com/m/a") ||
		!strings.Contains(stdout, "FAIL\texample.com/m/b [build failed]") || !strings.Contains(stdout+stderr, "undefined: helper") ||
		!strings.Contains(stdout, "FAIL\texample.com/m/c [setup failed]") || !strings.Contains(stdout+stderr, "c_test.go:5:33: expected operand") {
		t.Fatalf("calltrail test: exit %d, want 1, a passed, b and c not built\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runCmd("chains", "example.com/m/a.A", filepath.Join("traces", "a.test.trace")); code != 0 || !strings.Contains(stdout, "TestA") {
		t.Errorf("chains a.A: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestPkgsLeavesMainOut: a program whose --pkgs leaves its main package
// out says why its functions, named main.*, are not in the trace.
func TestPkgsLeavesMainOut(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":     "module example.com/m\n\ngo 1.22\n",
		"lib/lib.go": "package lib\n\n//go:noinline\nfunc Twice(n int) int { return 2 * n }\n",
		"main.go":    "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/m/lib\"\n)\n\nfunc main() { fmt.Println(lib.Twice(21)) }\n",
	})
	chdir(t, dir)
	if code, stdout, stderr := runCmd("run", "--pkgs", "example.com/m/lib", "."); code != 0 || stdout != "42\n" {
		t.Fatalf("calltrail run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	want := "main.main is not traced: package main was not instrumented (not matched by --pkgs: add example.com/m to its patterns, separated by spaces, to trace it)"
	if code, _, stderr := runCmd("chains", "main.main"); code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("chains main.main: exit %d, %q; want %q", code, stderr, want)
	}
	// A pattern that matches nothing is said, whether the others match
	// or not.
	for _, pkgs := range []string{"example.com/m/lbi", "example.com/m/lib example.com/m/lbi", "example.com/m/lib ./nothere/..."} {
		bad := strings.Fields(pkgs)[len(strings.Fields(pkgs))-1]
		if code, _, stderr := runCmd("run", "--pkgs", pkgs, "."); code == 0 || !strings.Contains(stderr, "--pkgs "+bad+": matches no package") {
			t.Errorf("run --pkgs %q: exit %d, %q", pkgs, code, stderr)
		}
	}
}

// TestPkgsOnlyModuleCache: a program whose --pkgs names only a package
// of the module cache, which calltrail traces in a copy of its module,
// says why its own functions and its other dependencies' are not in the
// trace, as when it names a package of the main module. The dependency
// comes from a module proxy of files, into a module cache of the test's.
func TestPkgsOnlyModuleCache(t *testing.T) {
	dir := t.TempDir()
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	for name, data := range map[string]string{
		"go.mod":         "module example.com/dep\n\ngo 1.22\n",
		"dep.go":         "package dep\n\n//go:noinline\nfunc Twice(n int) int { return 2 * n }\n",
		"other/other.go": "package other\n\n//go:noinline\nfunc Add(a, b int) int { return a + b }\n",
	} {
		w, err := zw.Create("example.com/dep@v1.0.0/" + name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(data))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"proxy/example.com/dep/@v/list":        "v1.0.0\n",
		"proxy/example.com/dep/@v/v1.0.0.info": `{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`,
		"proxy/example.com/dep/@v/v1.0.0.mod":  "module example.com/dep\n\ngo 1.22\n",
		"proxy/example.com/dep/@v/v1.0.0.zip":  zipped.String(),
		"m/go.mod":                             "module example.com/m\n\ngo 1.22\n\nrequire example.com/dep v1.0.0\n",
		"m/main.go":                            "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/dep\"\n\t\"example.com/dep/other\"\n)\n\nfunc main() { fmt.Println(other.Add(dep.Twice(20), 2)) }\n",
	})
	t.Setenv("GOPROXY", "file://"+filepath.ToSlash(filepath.Join(dir, "proxy")))
	t.Setenv("GOMODCACHE", filepath.Join(dir, "modcache"))
	t.Setenv("GOFLAGS", "-mod=mod -modcacherw")
	t.Setenv("GONOSUMDB", "example.com")
	t.Setenv("GONOSUMCHECK", "1")
	t.Setenv("GOSUMDB", "off")
	chdir(t, filepath.Join(dir, "m"))
	if code, stdout, stderr := runCmd("run", "--pkgs", "example.com/dep", "."); code != 0 || stdout != "42\n" {
		t.Fatalf("calltrail run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runCmd("chains", "example.com/dep.Twice"); code != 0 || !strings.Contains(stdout, "1 call,") {
		t.Errorf("chains dep.Twice: exit %d\n%s%s", code, stdout, stderr)
	}
	for name, want := range map[string]string{
		"main.main":                 "main.main is not traced: package main was not instrumented (not matched by --pkgs: add example.com/m to its patterns, separated by spaces, to trace it)",
		"example.com/dep/other.Add": "example.com/dep/other.Add is not traced: package example.com/dep/other was not instrumented (not matched by --pkgs: add example.com/dep/other to its patterns, separated by spaces, to trace it)",
	} {
		if code, _, stderr := runCmd("chains", name); code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("chains %s: exit %d, %q; want %q", name, code, stderr, want)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	module(t)
	if code, _, stderr := runCmd("run"); code != 2 || !strings.Contains(stderr, "name the package to run") {
		t.Errorf("run without a package: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCmd("build", "./nosuchpkg"); code != 1 || !strings.Contains(stderr, "nosuchpkg") {
		t.Errorf("missing package: exit %d, %q", code, stderr)
	}
	// A package no module provides: the go command's own words, not
	// the module proxy's answer to the lookup calltrail's -mod=mod makes.
	if code, _, stderr := runCmd("build", "example.com/nosuchmodule/pkg"); code != 1 || !strings.Contains(stderr, "no required module provides package example.com/nosuchmodule/pkg") {
		t.Errorf("a package of no module: exit %d, %q", code, stderr)
	}
}

// writeFiles writes files (path: content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWorkspace runs a program of a go.work workspace, with the other
// module of the workspace instrumented too.
func TestWorkspace(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.work":     "go 1.22\n\nuse (\n\t./app\n\t./lib\n)\n",
		"app/go.mod":  "module example.com/app\n\ngo 1.22\n\nrequire example.com/lib v0.0.0\n",
		"app/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/lib\"\n)\n\nfunc main() { fmt.Println(lib.Double(21)) }\n",
		"lib/go.mod":  "module example.com/lib\n\ngo 1.22\n",
		// Not inlined, so that it is traced (see TestReplaceAndCgo).
		"lib/lib.go": "package lib\n\n//go:noinline\nfunc Double(x int) int { return 2 * x }\n",
	})
	wd, _ := os.Getwd()
	os.Chdir(filepath.Join(dir, "app"))
	defer os.Chdir(wd)
	code, stdout, stderr := runCmd("run", "--pkgs", "example.com/...", ".")
	if code != 0 || stdout != "42\n" {
		t.Fatalf("exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	if s := readSummary(t, "calltrail.out"); s.Calls != 2 {
		t.Errorf("%d calls, want main.main and lib.Double", s.Calls)
	}
}

// TestVendoredDependency runs a vendored module with a dependency from
// the module proxy instrumented as well.
func TestVendoredDependency(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":  "module example.com/vend\n\ngo 1.22\n\nrequire github.com/google/uuid v1.6.0\n",
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/google/uuid\"\n)\n\nfunc main() { fmt.Println(uuid.NewSHA1(uuid.NameSpaceDNS, []byte(\"calltrail\"))) }\n",
	})
	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	for _, args := range [][]string{{"mod", "tidy"}, {"mod", "vendor"}} {
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
	}
	before, _ := os.ReadFile("vendor/modules.txt")
	code, stdout, stderr := runCmd("run", "--pkgs", "github.com/google/uuid example.com/vend", ".")
	if code != 0 || stdout != "8e7d2864-5c8f-5265-92b7-fe51d45714b7\n" {
		t.Fatalf("exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "instrumented in 2 packages") {
		t.Errorf("summary: %s", stderr)
	}
	after, _ := os.ReadFile("vendor/modules.txt")
	if !bytes.Equal(before, after) {
		t.Error("vendor/modules.txt changed")
	}
	f, err := tracefile.Open("calltrail.out")
	if err != nil {
		t.Fatal(err)
	}
	r := f.Reader
	defer f.Close()
	seen := false
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if strings.HasPrefix(r.Func(ev.Func).Name, "github.com/google/uuid.") {
			seen = true
		}
	}
	if !seen {
		t.Error("no call of github.com/google/uuid in the trace")
	}
}

// TestReplaceAndCgo runs a program with a cgo file that uses a module
// replaced by a relative path, with both modules instrumented.
func TestReplaceAndCgo(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no C compiler for cgo")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"lib/go.mod": "module example.com/lib\n\ngo 1.22\n",
		"lib/lib.go": "package lib\n\nfunc Double(x int) int { return 2 * x }\n",
		"app/go.mod": "module example.com/app\n\ngo 1.22\n\nrequire example.com/lib v0.0.0\n\nreplace example.com/lib => ../lib\n",
		"app/main.go": "package main\n\n/*\nstatic int triple(int x) { return 3 * x; }\n*/\nimport \"C\"\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/lib\"\n)\n\n" +
			"func viaC(x int) int { return int(C.triple(C.int(x))) }\n\nfunc main() { fmt.Println(lib.Double(viaC(7))) }\n",
	})
	wd, _ := os.Getwd()
	os.Chdir(filepath.Join(dir, "app"))
	defer os.Chdir(wd)
	// The compiler inlines viaC and lib.Double, which allocate nothing:
	// traced by default.
	code, stdout, stderr := runCmd("run", "--pkgs", "example.com/...", ".")
	if code != 0 || stdout != "42\n" {
		t.Fatalf("exit %d, stdout %q\n%s", code, stdout, stderr)
	}
	if s := readSummary(t, "calltrail.out"); s.Calls != 3 {
		t.Errorf("%d calls, want main.main, main.viaC and lib.Double", s.Calls)
	}
}

// TestRunSignal sends SIGINT to calltrail run: the program gets it, dies
// of it with its trace complete, calltrail cleans up, sums up the trace,
// and ends the same way.
func TestRunSignal(t *testing.T) {
	bin := clitest.Binary(t)
	dir := t.TempDir()
	writeFiles(t, dir, sleeper)
	tmp := t.TempDir()
	cmd := exec.Command(bin, "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if !strings.HasPrefix(line, "ready ") {
		t.Fatalf("program said %q; stderr:\n%s", line, stderr.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Errorf("calltrail ended with %v, want killed by SIGINT like the program", ws)
	}
	s := readSummary(t, filepath.Join(dir, "calltrail.out"))
	if s.End != "signal: interrupt" || s.Unfinished != 2 {
		t.Errorf("trace ended %q with %d unfinished calls; want the signal, main and wait unfinished", s.End, s.Unfinished)
	}
	if s.Meta.Program != "sleeper" {
		t.Errorf("the trace names the program %q, want sleeper", s.Meta.Program)
	}
	if !strings.Contains(stderr.String(), "calltrail: 2 functions instrumented in 1 package; recorded 2 calls") {
		t.Errorf("no summary:\n%s", stderr.String())
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "calltrail-build-*")); len(left) > 0 {
		t.Errorf("build directory left behind: %s", left)
	}
}

// sleeper is a program that says it is ready, with its process id, then
// sleeps.
var sleeper = map[string]string{
	"go.mod":  "module example.com/sleeper\n\ngo 1.22\n",
	"main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"time\"\n)\n\nfunc wait() {\n\tfmt.Println(\"ready\", os.Getpid())\n\ttime.Sleep(time.Minute)\n}\n\nfunc main() { wait() }\n",
}

// TestRunKilled kills calltrail run by SIGKILL, which it cannot catch:
// the program it started dies with it.
func TestRunKilled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a parent-death signal is Linux's")
	}
	bin := clitest.Binary(t)
	dir := t.TempDir()
	writeFiles(t, dir, sleeper)
	cmd := exec.Command(bin, "run", ".")
	cmd.Dir = dir
	// Killed, calltrail cannot remove its build directory: keep it
	// where the test's own clean-up will.
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "ready ")))
	if err != nil {
		t.Fatalf("program said %q", line)
	}
	cmd.Process.Kill()
	// The program is gone once its process is, or is a zombie waiting
	// for whoever inherited it.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("the program outlived calltrail run by a minute")
		}
	}
}

// TestRunOutputChecked gives run a trace path it cannot write: it says so
// before building or running anything.
func TestRunOutputChecked(t *testing.T) {
	dir, _ := module(t)
	code, stdout, stderr := runCmd("run", "-o", filepath.Join(dir, "missing", "t.out"), ".")
	if code != 1 || stdout != "" || !strings.Contains(stderr, "missing: no such file or directory") || strings.Contains(stderr, "instrumented") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestCallchainsPipeline runs examples/callchains through calltrail run
// and checks chains main.D lists exactly the chains the program runs,
// with exact call counts and where their goroutines were started.
func TestCallchainsPipeline(t *testing.T) {
	bin := clitest.Binary(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.out")
	run := exec.Command(bin, "run", "-o", trace, "../../examples/callchains")
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("calltrail run: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "chains", "--json", "main.D", trace).Output()
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Chains []query.Chain }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range res.Chains {
		l := fmt.Sprintf("%d %s", c.Calls, query.Text(c.Path, " -> "))
		for _, s := range c.SpawnedFrom {
			l += " (started from " + query.Text(s, " -> ") + ")"
		}
		lines = append(lines, l)
	}
	golden(t, "callchains-chains.golden", strings.Join(lines, "\n")+"\n")
}

// TestTracedHelp checks that the help of build, run and test lists their
// own flags, and that each flag it lists is calltrail's, not passed on to
// the go command.
func TestTracedHelp(t *testing.T) {
	for _, name := range []string{"build", "run", "test"} {
		code, _, help := runCmd(name, "-h")
		if code != 0 || !strings.Contains(help, "Every other flag goes to go ") {
			t.Errorf("%s -h: exit %d\n%s", name, code, help)
		}
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		verbs[name].flags(fs)
		n := 0
		fs.VisitAll(func(f *flag.Flag) {
			n++
			if !strings.Contains(help, "  -"+f.Name+" ") && !strings.Contains(help, "  -"+f.Name+"\n") {
				t.Errorf("%s -h does not list -%s", name, f.Name)
			}
			v, ok := map[string]string{"profiles": "cpu", "funcs": "x", "exclude": "x", "inlined": "true"}[f.Name]
			if !ok {
				v = "1"
			}
			arg := "--" + f.Name + "=" + v
			var a tracedArgs
			own := flag.NewFlagSet(name, flag.ContinueOnError)
			tracedFlags(own, &a, "", name != "build", name != "test")
			if err := parseTraced(own, &a, []string{arg, "-race", "."}, name == "run"); err != nil || len(a.goFlags) != 1 || len(a.packages) != 1 {
				t.Errorf("%s %s -race .: %v, go flags %q, packages %q; want it taken by calltrail", name, arg, err, a.goFlags, a.packages)
			}
		})
		if n < 5 {
			t.Errorf("%s: %d flags in the help", name, n)
		}
	}
	if code, _, stderr := runCmd("run", "--profiles", "gpu", "."); code != 2 || !strings.Contains(stderr, "want a list of cpu, mutex and block") {
		t.Errorf("run --profiles gpu: exit %d, %q", code, stderr)
	}
}

// TestMistypedFlag checks that a flag one letter off calltrail's own is
// said to be so in one line, while the go command's flags, however close
// to calltrail's, still go to it.
func TestMistypedFlag(t *testing.T) {
	for _, tc := range []struct{ arg, near string }{
		{"--pkg", "pkgs"}, {"-func", "funcs"}, {"--erors", "errors"}, {"--exlcude", "exclude"},
		{"--profile=cpu", "profiles"}, {"--inline", "inlined"}, {"--lives", "live"},
	} {
		want := "calltrail run: flag provided but not defined: " + tc.arg + " (did you mean --" + tc.near + "? calltrail run -h lists its flags)\n"
		if code, _, stderr := runCmd("run", tc.arg, "x", "."); code != 2 || stderr != want {
			t.Errorf("run %s x .: exit %d, %q; want 2, %q", tc.arg, code, stderr, want)
		}
	}
	for _, arg := range []string{"-a", "-p", "-n", "-race", "-x", "-o"} {
		var a tracedArgs
		fs := flag.NewFlagSet("calltrail build", flag.ContinueOnError)
		tracedFlags(fs, &a, "", false, true)
		if err := parseTraced(fs, &a, []string{arg, "1", "."}, false); err != nil {
			t.Errorf("build %s 1 .: %v", arg, err)
		}
	}
}

// TestRunFiles runs a program named by its files, as go run main.go
// does: they are the user's code, and traced.
func TestRunFiles(t *testing.T) {
	dir, files := module(t)
	code, _, stderr := runCmd("run", "-o", "t.out", "main.go", "a")
	if code != 3 || !strings.Contains(stderr, "calltrail: 2 functions instrumented in 1 package; recorded 178 calls") {
		t.Fatalf("exit %d, want the program's 3; stderr:\n%s", code, stderr)
	}
	if s := readSummary(t, "t.out"); s.Meta.Path != filepath.Join(dir, "main") {
		t.Errorf("the trace names the program %q, want %q", s.Meta.Path, filepath.Join(dir, "main"))
	}
	unchanged(t, dir, files)
}

// TestBuildWithRuntimeReplaced: a module that points the runtime at a
// checkout of its own with replace, to use live.Register before a
// release, builds and runs traced: the build's runtime takes the place of
// its checkout.
func TestBuildWithRuntimeReplaced(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod": "module example.com/rep\n\ngo 1.22\n\nrequire github.com/calltrail/calltrail v0.0.0\n\nreplace github.com/calltrail/calltrail => " + repo + "\n",
		"main.go": `package main

import (
	"fmt"
	"net/http"

	"github.com/calltrail/calltrail/live"
)

func hello() string { return "hello" }

func main() {
	live.Register(http.NewServeMux())
	fmt.Println(hello())
}
`,
	})
	chdir(t, dir)
	code, stdout, stderr := runCmd("run", "-o", "t.out", ".")
	if code != 0 || stdout != "hello\n" {
		t.Fatalf("calltrail run: exit %d, %q\n%s", code, stdout, stderr)
	}
	if s := readSummary(t, "t.out"); s.Calls != 2 {
		t.Errorf("%d calls, want main.main and main.hello", s.Calls)
	}
}

// TestEndpointLinked checks which programs get the control endpoint: by
// default those that import net/http already; --live links it into any,
// its main package traced or not, --live=false into none. A program asked to serve on CALLTRAIL_HTTP
// without it says so, whether it runs for more than a second or ends
// before.
func TestEndpointLinked(t *testing.T) {
	// The build's own goroutines run under the detector in TestBuild.
	clitest.SkipRace(t, "builds programs in several variants with go build and the linker, as children")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod": "module example.com/app\n\ngo 1.22\n",
		// Alive long enough for the runtime to look for the endpoint.
		"plain/main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"time\"\n)\n\nfunc main() {\n\ttime.Sleep(1500 * time.Millisecond)\n\tfmt.Println(\"done\")\n}\n",
		"svc/main.go":   "package main\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n)\n\nfunc main() { fmt.Println(http.StatusText(http.StatusOK)) }\n",
		// --pkgs traces its library, not its main package.
		"withlib/main.go": "package main\n\nimport \"example.com/app/lib\"\n\nfunc main() { lib.Nap() }\n",
		"lib/lib.go":      "package lib\n\nimport \"time\"\n\nfunc Nap() { time.Sleep(1500 * time.Millisecond) }\n",
	})
	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	linked := func(bin string) bool {
		t.Helper()
		out, err := exec.Command("go", "tool", "nm", bin).Output()
		if err != nil {
			t.Fatalf("go tool nm %s: %v", bin, err)
		}
		return strings.Contains(string(out), "github.com/calltrail/calltrail/live.Listen")
	}
	for _, tt := range []struct {
		pkg  string
		args []string
		want bool
	}{
		{"./plain", nil, false},
		{"./plain", []string{"--live"}, true},
		{"./svc", nil, true},
		{"./svc", []string{"--live=false"}, false},
		{"./withlib", []string{"--live", "--pkgs", "example.com/app/lib"}, true},
	} {
		bin := filepath.Join(t.TempDir(), "app")
		args := append(append([]string{"build", "-o", bin}, tt.args...), tt.pkg)
		if code, _, stderr := runCmd(args...); code != 0 {
			t.Fatalf("calltrail %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		if got := linked(bin); got != tt.want {
			t.Errorf("calltrail %s: endpoint linked %v, want %v", strings.Join(args, " "), got, tt.want)
		}
		// The runtime looks a second after it starts, or when tracing
		// ends: plain runs for one and a half, svc ends at once.
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "CALLTRAIL_HTTP=127.0.0.1:0")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", bin, err, stderr.String())
		}
		if warned := strings.Contains(stderr.String(), "built without the control endpoint (calltrail build --live links it)"); warned == tt.want {
			t.Errorf("calltrail %s, run with CALLTRAIL_HTTP: endpoint linked %v, warned %v: %q", strings.Join(args, " "), tt.want, warned, stderr.String())
		}
	}
}

// TestLanguageVersionKept builds modules that declare a Go version older
// than the runtime's: the program keeps the semantics its go line gives
// it (loop variables shared by the iterations before go1.22), traced as
// untraced, alone or in a workspace, and its tests pass vet.
func TestLanguageVersionKept(t *testing.T) {
	const main = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar fs []func() int\n\tfor i := 0; i < 3; i++ {\n\t\tfs = append(fs, func() int { return i })\n\t}\n\tfmt.Println(fs[0](), fs[1](), fs[2]())\n}\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		dir   string
	}{
		{"module", map[string]string{
			"go.mod":       "module example.com/old\n\ngo 1.21\n",
			"main.go":      main,
			"main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestLoop(t *testing.T) { main() }\n",
		}, "."},
		{"workspace", map[string]string{
			"go.work":     "go 1.21\n\nuse ./app\n",
			"app/go.mod":  "module example.com/app\n\ngo 1.21\n",
			"app/main.go": main,
		}, "app"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			wd, _ := os.Getwd()
			os.Chdir(filepath.Join(dir, tc.dir))
			defer os.Chdir(wd)
			before, _ := os.ReadFile("go.mod")
			code, stdout, stderr := runCmd("run", "-o", "t.out", ".")
			if code != 0 || stdout != "3 3 3\n" {
				t.Errorf("exit %d, program printed %q, want go1.21's 3 3 3\n%s", code, stdout, stderr)
			}
			// The tests too, vetted as go test vets them.
			if _, err := os.Stat("main_test.go"); err == nil {
				if code, stdout, stderr := runCmd("test", "-o", "traces", "-v", "."); code != 0 || !strings.Contains(stdout, "3 3 3\n") {
					t.Errorf("calltrail test: exit %d, printed %q\n%s", code, stdout, stderr)
				}
			}
			if after, _ := os.ReadFile("go.mod"); !bytes.Equal(before, after) {
				t.Errorf("go.mod changed:\n%s", after)
			}
		})
	}
}
