//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

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
	f, r, err := openTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := tracefile.Summarize(r)
	if err != nil {
		t.Fatal(err)
	}
	return s
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
	if !strings.Contains(stderr, "calltrail: 2 functions instrumented in 1 packages") || !strings.Contains(stderr, "calltrail replay t.out") {
		t.Errorf("summary:\n%s", stderr)
	}
	s := readSummary(t, "t.out")
	if s.Calls != 178 || s.End != "exit" { // main, and fib(10) makes 177 calls
		t.Errorf("trace: %d calls, end %q; want 178, exit", s.Calls, s.End)
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
}

func TestBuildErrors(t *testing.T) {
	module(t)
	if code, _, stderr := runCmd("run"); code != 2 || !strings.Contains(stderr, "name the package to run") {
		t.Errorf("run without a package: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCmd("build", "./nosuchpkg"); code != 1 || !strings.Contains(stderr, "nosuchpkg") {
		t.Errorf("missing package: exit %d, %q", code, stderr)
	}
	_ = runtime.GOOS
}
