//go:build unix

package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

// TestPanickingTest: a test that panics kills its test binary, as under
// go test, and the binary's trace still ends complete, saying so, with
// the calls of the test that ran before it.
func TestPanickingTest(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod": "module example.com/ptest\n\ngo 1.22\n",
		"p.go": `package ptest

func Work(n int) int {
	s := 0
	for i := range n {
		s += step(i)
	}
	return s
}

func step(i int) int { return i % 7 }

func Boom() { panic("boom") }
`,
		"p_test.go": `package ptest

import "testing"

func TestWork(t *testing.T) {
	if Work(1000) == 0 {
		t.Fatal("no work")
	}
}

func TestBoom(t *testing.T) { Boom() }
`,
	})
	chdir(t, dir)
	code, stdout, stderr := runCmd("test", "-o", "traces", ".")
	if code != 1 || !strings.Contains(stdout+stderr, "panic: boom") {
		t.Fatalf("calltrail test: exit %d, want 1 with the panic\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, filepath.Join("traces", "ptest.test.trace"))
	// TestWork, Work, 1000 calls of step, TestBoom and Boom.
	if s.End != "panic" || s.Calls != 1004 || s.Panics != 2 {
		t.Errorf("trace ended %q with %d calls, %d left by panic; want panic, 1004, 2", s.End, s.Calls, s.Panics)
	}
}

// TestTwoPackagesOfOneName: the test binaries of two packages named util
// write two traces, each named so as to tell which is which, as does a
// main package's, and calltrail test says which package each is of.
func TestTwoPackagesOfOneName(t *testing.T) {
	dir := t.TempDir()
	test := func(pkg string) string {
		return "package util\n\nimport \"testing\"\n\nfunc Name() string { return \"" + pkg + "\" }\n\nfunc TestName(t *testing.T) {\n\tif Name() == \"\" {\n\t\tt.Fatal(\"no name\")\n\t}\n}\n"
	}
	writeFiles(t, dir, map[string]string{
		"go.mod":                "module example.com/two\n\ngo 1.22\n",
		"util/util_test.go":     test("util"),
		"api/util/util_test.go": test("api/util"),
		// A main package's tests, which the build records under the
		// package's own path.
		"cmd/tool/main.go":      "package main\n\nfunc main() {}\n",
		"cmd/tool/main_test.go": strings.Replace(test("cmd/tool"), "package util", "package main", 1),
	})
	chdir(t, dir)
	code, _, stderr := runCmd("test", "-o", "traces", "./...")
	if code != 0 {
		t.Fatalf("calltrail test: exit %d\n%s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join("traces", "*.trace"))
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	if strings.Join(names, " ") != "api-util.test.trace cmd-tool.test.trace util.test.trace" {
		t.Errorf("traces %v, want api-util.test.trace, cmd-tool.test.trace and util.test.trace", names)
	}
	for _, pkg := range []string{"example.com/two/util", "example.com/two/api/util", "example.com/two/cmd/tool"} {
		if !strings.Contains(stderr, "("+pkg+")") {
			t.Errorf("calltrail test does not say which trace is of %s:\n%s", pkg, stderr)
		}
	}
	for _, f := range files {
		code, stdout, _ := runCmd("info", f)
		if code != 0 || !strings.Contains(stdout, "package     example.com/two/") {
			t.Errorf("info %s: exit %d\n%s", f, code, stdout)
		}
	}
}

// TestPasswordNotShown: a store URL's password appears in no output or
// error of calltrail's, however the store is reached.
func TestPasswordNotShown(t *testing.T) {
	const pw = "S3CRETPW"
	for _, args := range [][]string{
		{"report", "--from", "clickhouse://u:" + pw + "@127.0.0.1:1/db"},
		{"chains", "--from", "clickhouse://u:" + pw + "@127.0.0.1:1/db?bogus=1", "main.D"},
		{"report", "--from", "clickhouse://u:" + pw + "@bad host/db"},
		{"push", "--to", "clickhouse://u:" + pw + "@127.0.0.1:1/db", "x.trace"},
	} {
		code, stdout, stderr := runCmd(args...)
		if code == 0 || strings.Contains(stdout+stderr, pw) {
			t.Errorf("%v: exit %d, the password shown:\n%s%s", args, code, stdout, stderr)
		}
	}
}

// TestHostileNames: names, errors and program arguments holding terminal
// escapes and NUL, as a crafted trace or a shared store may, reach no
// output raw, and the SVG flame graph stays well-formed XML.
func TestHostileNames(t *testing.T) {
	const evil = "main.\x1b[2J\x1b]0;pwned\x07evil\x00\xff"
	var buf bytes.Buffer
	e, err := tracewrite.NewEncoder(&buf, map[string]string{"program": "x", "path": "/x\x1b[31m", "args": "\x1b]2;title\x07 -n"})
	if err != nil {
		t.Fatal(err)
	}
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.main", File: "main.go", Line: 1}, {Name: evil, File: "e\x1b.go", Line: 2}})
	e.Errors(1, []tracefile.Error{{Type: "*errors.errorString", Message: "bad\x1b[0m\x00"}})
	var b tracewrite.Batch
	b.Enter(1, 1, 0)
	b.Enter(1, 2, 10)
	b.Error(1, 1, 90)
	b.Exit(1, tracefile.Return, 90)
	b.Exit(1, tracefile.Return, 100)
	e.Clock(101, 101)
	e.Events(&b)
	e.End("main returned", time.Unix(0, 0))
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	trace := filepath.Join(dir, "evil.trace")
	if err := os.WriteFile(trace, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"report"}, {"replay"}, {"info"}, {"chains", "evil"}, {"report", "--json"}, {"goroutines"}} {
		code, stdout, stderr := runCmd(append(args, trace)...)
		if code != 0 || strings.ContainsAny(stdout+stderr, "\x1b\x00\x07") || !utf8.ValidString(stdout+stderr) {
			t.Errorf("%v: exit %d, raw bytes in:\n%q%q", args, code, stdout, stderr)
		}
	}
	svg := filepath.Join(dir, "f.svg")
	if code, _, stderr := runCmd("flame", "-o", svg, trace); code != 0 {
		t.Fatalf("flame: exit %d: %s", code, stderr)
	}
	data, _ := os.ReadFile(svg)
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("the flame graph is not well-formed XML: %v", err)
		}
	}
}

// TestStoreSelectors: times out of what the store can hold are refused,
// not left to select nothing; a label whose value has a comma selects as
// push --label made it.
func TestStoreSelectors(t *testing.T) {
	for _, flag := range []string{"--since=1600-01-01T00:00:00Z", "--until=2300-01-01T00:00:00Z"} {
		code, _, stderr := runCmd("report", "--from", "clickhouse://127.0.0.1:1/db", flag)
		if code != 2 || !strings.Contains(stderr, "want a time between 1678 and 2261") {
			t.Errorf("%s: exit %d, %q", flag, code, stderr)
		}
	}
	// How diff's labels split is store.Selection.Narrow's (TestNarrow).
}
