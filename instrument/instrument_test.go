package instrument

import (
	"bytes"
	"flag"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/internal/clitest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// inputs are the testdata files that are not golden outputs.
func inputs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.go")
	if err != nil || len(files) == 0 {
		t.Fatal("no testdata", err)
	}
	return files
}

func TestGolden(t *testing.T) {
	for _, in := range inputs(t) {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			res, err := File(in, src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(in, ".go") + ".golden"
			if *update {
				os.WriteFile(golden, res.Src, 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(res.Src, want) {
				t.Errorf("output differs from %s:\n%s", golden, res.Src)
			}
			checkRoundTrip(t, in, src, res.Src, Options{})
		})
	}
}

// checkRoundTrip checks what every instrumented file must satisfy: the
// same lines, two more at the end (a blank one and the table); undo
// gives back the original; instrumenting again changes nothing.
func checkRoundTrip(t *testing.T, name string, src, out []byte, opts Options) {
	t.Helper()
	if Instrumented(out) {
		inLines, outLines := bytes.Count(src, []byte("\n")), bytes.Count(out, []byte("\n"))
		if !bytes.HasSuffix(src, []byte("\n")) {
			inLines++
		}
		if outLines != inLines+1 && outLines != inLines+2 {
			t.Errorf("%s: %d lines became %d", name, inLines, outLines)
		}
		// Every original line is still on its line, with text only added.
		orig, got := strings.Split(string(src), "\n"), strings.Split(string(out), "\n")
		for i, l := range orig {
			if i < len(got) && !isSubsequence(l, got[i]) {
				t.Fatalf("%s:%d: line changed:\n%q\n%q", name, i+1, l, got[i])
			}
		}
	}
	back, err := Undo(out)
	if err != nil {
		t.Fatalf("%s: undo: %v", name, err)
	}
	if !bytes.Equal(back, src) {
		t.Errorf("%s: undo does not give back the original", name)
	}
	again, err := File(name, out, opts)
	if err != nil {
		t.Fatalf("%s: again: %v", name, err)
	}
	if !bytes.Equal(again.Src, out) {
		t.Errorf("%s: instrumenting twice differs from once", name)
	}
}

// isSubsequence reports whether a's bytes appear in b in order: b is a
// with text inserted.
func isSubsequence(a, b string) bool {
	j := 0
	for i := 0; i < len(b) && j < len(a); i++ {
		if b[i] == a[j] {
			j++
		}
	}
	return j == len(a)
}

// TestStandardLibrary instruments and undoes real code: every file of a
// few packages of the standard library.
func TestStandardLibrary(t *testing.T) {
	if clitest.Race { // 20 s of the package's 28 under the detector
		t.Skip("the rewriter runs on one goroutine, so the race detector has nothing to find; the pass without it runs this test")
	}
	dirs := []string{"net/http", "go/parser", "encoding/json", "runtime", "sync", "internal/abi", "cmd/go/internal/load"}
	n := 0
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", d, "*.go"))
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res, err := File(f, src, Options{Package: d})
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			checkRoundTrip(t, f, src, res.Src, Options{Package: d})
			n += len(res.Funcs)
		}
	}
	if n < 5000 {
		t.Errorf("only %d functions instrumented in %v", n, dirs)
	}
}

// TestLineFileKeepsPositions: with LineFile, every token of the file is
// where the file has it, line and column, as the compiler reads the copy
// (line directives and all), though guards and names were inserted
// before it on its line: standard library files, and one-line functions
// whose results are named.
func TestLineFileKeepsPositions(t *testing.T) {
	names, err := filepath.Abs("testdata/names.go") // as the overlay's copies name files
	if err != nil {
		t.Fatal(err)
	}
	files := []string{names}
	for _, d := range []string{"encoding/json", "go/parser", "sync"} {
		more, _ := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", d, "*.go"))
		files = append(files, more...)
	}
	oneLiners := []byte("package p\n\nfunc A() error { return nil }\nfunc B(x int) (int, error) { y := x; return y, nil } // done\n")
	moved := 0
	check := func(name string, src []byte) {
		res, err := File(name, src, Options{LineFile: name, Errors: true, Args: regexp.MustCompile(`.`)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Skipped != "" {
			return
		}
		type tok struct {
			line, col int
			tok       token.Token
			lit       string
		}
		scan := func(src []byte) map[tok]int {
			fset := token.NewFileSet()
			var s scanner.Scanner
			s.Init(fset.AddFile(name, -1, len(src)), src, nil, 0)
			out := map[tok]int{}
			for {
				pos, tk, lit := s.Scan()
				if tk == token.EOF {
					return out
				}
				if tk == token.SEMICOLON && lit == "\n" || lit == "_" {
					continue // where the line ends, which insertions move; a blank name, which Args replaces
				}
				p := fset.Position(pos)
				if p.Filename == name {
					out[tok{p.Line, p.Column, tk, lit}]++
				}
			}
		}
		want, got := scan(src), scan(res.Src)
		for k, n := range want {
			if got[k] < n {
				t.Errorf("%s: %s %q at %d:%d is not there in the copy", name, k.tok, k.lit, k.line, k.col)
				return
			}
		}
		if !bytes.Equal(res.Src, src) {
			moved++
		}
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		check(f, src)
	}
	check("/src/oneliners.go", oneLiners)
	check("/src/bom.go", []byte("\ufeffpackage p\n\nfunc C() { _ = 1 }\n"))
	if moved < 50 {
		t.Errorf("only %d files instrumented", moved)
	}
}

// TestOmitted: every function File leaves untraced is listed, with why.
func TestOmitted(t *testing.T) {
	tests := []struct {
		name, src string
		opts      Options
		want      string // name why, ...
	}{
		{"generated", "// Code generated by x. DO NOT EDIT.\n\npackage p\n\nfunc F() { _ = func() {} }\n", Options{}, "p.F in a generated file, p.F.func1 in a generated file"},
		{"file ignore", "//calltrail:ignore\n\npackage p\n\nfunc F() {}\n", Options{}, "p.F marked //calltrail:ignore"},
		{"func ignore", "package p\n\n//calltrail:ignore\nfunc F() {}\n\nfunc G() {}\n", Options{}, "p.F marked //calltrail:ignore"},
		{"no body", "package p\n\nfunc F()\n", Options{}, "p.F declared without a body (assembly or linkname)"},
		{"nosplit", "package p\n\n//go:nosplit\nfunc F() { _ = func() {} }\n", Options{}, "p.F marked //go:nosplit"},
		{"funcs", "package p\n\nfunc F() {}\nfunc G() {}\n", Options{Funcs: regexp.MustCompile(`\.G$`)}, "p.F not matched by --funcs"},
		{"exclude", "package p\n\nfunc F() {}\nfunc G() {}\n", Options{Exclude: regexp.MustCompile(`\.G$`)}, "p.G matched by --exclude"},
		{"kept inlined", "package p\n\nfunc F() *int { return new(int) }\nfunc G() {}\n", Options{KeepInlined: map[Pos]string{{"/src/x.go", 3, 6}: "x.go:3: new(int) escapes to heap"}}, "p.F kept inlined"},
		{"traced by hand", "package p\n\nimport ct \"github.com/calltrail/calltrail\"\n\nfunc F() {\n\tdefer ct.Trace()()\n}\n", Options{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := File("/src/x.go", []byte(tt.src), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range res.Omitted {
				got = append(got, o.Name+" "+string(o.Why))
				if o.Line == 0 || (o.Why == WhyInlined) != (o.Detail != "") {
					t.Errorf("omitted %+v", o)
				}
			}
			if g := strings.Join(got, ", "); g != tt.want {
				t.Errorf("omitted %q, want %q", g, tt.want)
			}
		})
	}
}

func TestSkips(t *testing.T) {
	tests := []struct {
		name, src, skipped string
		funcs              []string
		opts               Options
	}{
		{"generated", "// Code generated by x. DO NOT EDIT.\n\npackage p\n\nfunc F() {}\n", "generated file", nil, Options{}},
		{"file ignore", "//calltrail:ignore\n\npackage p\n\nfunc F() {}\n", "//calltrail:ignore", nil, Options{}},
		{"assembly", "package p\n\nfunc F()\n", "no functions to instrument", nil, Options{}},
		{"func ignore", "package p\n\n//calltrail:ignore\nfunc F() { _ = func() {} }\n\nfunc G() {}\n", "", []string{"p.G"}, Options{}},
		{"nosplit", "package p\n\n//go:nosplit\nfunc F() { _ = func() {} }\n", "", []string{"p.F.func1"}, Options{}},
		{"funcs", "package p\n\nfunc F() {}\nfunc G() {}\n", "", []string{"p.G"}, Options{Funcs: regexp.MustCompile(`\.G$`)}},
		{"exclude", "package p\n\nfunc F() {}\nfunc G() {}\n", "", []string{"p.F"}, Options{Exclude: regexp.MustCompile(`\.G$`)}},
		{"import path", "package uuid\n\nfunc New() {}\n", "", []string{"github.com/google/uuid.New"}, Options{Package: "github.com/google/uuid"}},
		{"main", "package main\n\nfunc main() {}\n", "", []string{"main.main"}, Options{Package: "example.com/cmd/x"}},
		{"no final newline", "package p\n\nfunc F() {}", "", []string{"p.F"}, Options{}},
		{"traced by hand", "package p\n\nimport ct \"github.com/calltrail/calltrail\"\n\nfunc F() {\n\tdefer ct.Trace()()\n}\n\nfunc G() {}\n", "", []string{"p.G"}, Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := File("x.go", []byte(tt.src), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Skipped != tt.skipped {
				t.Errorf("skipped = %q, want %q", res.Skipped, tt.skipped)
			}
			var got []string
			for _, f := range res.Funcs {
				got = append(got, f.Name)
			}
			if strings.Join(got, " ") != strings.Join(tt.funcs, " ") {
				t.Errorf("funcs = %v, want %v", got, tt.funcs)
			}
			if res.Skipped != "" && res.Src != nil && string(res.Src) != tt.src {
				t.Error("a skipped file was changed")
			}
			checkRoundTrip(t, "x.go", []byte(tt.src), res.Src, tt.opts)
		})
	}
}

func TestUndoDamaged(t *testing.T) {
	res, err := File("x.go", []byte("package p\n\nfunc F() {}\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	damaged := res.Src[:bytes.LastIndex(res.Src, []byte("\nvar __ctf_"))+1]
	if _, err := Undo(damaged); err == nil || !strings.Contains(err.Error(), "cannot undo safely") {
		t.Errorf("undo of a file without its table: %v", err)
	}
}

func TestParseError(t *testing.T) {
	if _, err := File("bad.go", []byte("package p\nfunc {"), Options{}); err == nil || !strings.Contains(err.Error(), "bad.go:2") {
		t.Errorf("got %v, want a parse error naming bad.go:2", err)
	}
}

// BenchmarkFile instruments every file of net/http and reports source
// lines per second.
func BenchmarkFile(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", "net", "http", "*.go"))
	var srcs [][]byte
	lines := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, src)
		lines += bytes.Count(src, []byte("\n"))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, src := range srcs {
			if _, err := File(files[j], src, Options{Package: "net/http"}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
