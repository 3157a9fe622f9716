package gobuild

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/instrument"
)

// TestKeepInlined asks the compiler about testdata/inline, whose comments
// say which of its functions to keep inlined, and checks that
// instrumenting with the answer leaves those alone and traces the rest.
func TestKeepInlined(t *testing.T) {
	dir, err := filepath.Abs("testdata/inline")
	if err != nil {
		t.Fatal(err)
	}
	at := func(line, col int) instrument.Pos {
		return instrument.Pos{File: filepath.Join(dir, "inline.go"), Line: line, Col: col}
	}
	kept := map[string]instrument.Pos{
		"newPoint":  at(10, 6),
		"newDigest": at(57, 6),
		"NewDigest": at(66, 6),
		"ptr":       at(101, 6),
	}
	traced := map[string]instrument.Pos{
		"norm":        at(13, 6),
		"Sum":         at(17, 6),
		"first":       at(20, 6),
		"Squares":     at(33, 6),
		"Twice":       at(38, 6),
		"Twice.func1": at(39, 12),
		"fib":         at(45, 6),
		"Fib":         at(52, 6),
		"Checksum":    at(69, 6),
		"chain":       at(74, 6),
		"evens":       at(82, 6),
		"odds":        at(89, 6),
		"Deref":       at(104, 6),
		"fail":        at(107, 6),
		"leak":        at(117, 6),
		"Leak":        at(123, 6),
		"middleware":  at(128, 6),
		"Use":         at(138, 6),
	}
	for _, tests := range []bool{false, true} {
		got, err := KeepInlined(InlineQuery{Dir: dir, Packages: []string{"example.com/inline"}, Tests: tests})
		if err != nil {
			t.Fatal(err)
		}
		for name, pos := range kept {
			if got[pos] == "" {
				t.Errorf("tests=%v: %s (%v) not kept inlined; got %v", tests, name, pos, got)
			}
		}
		for name, pos := range traced {
			if why, ok := got[pos]; ok {
				t.Errorf("tests=%v: %s kept inlined: %s", tests, name, why)
			}
		}
		if want := "inline.go:58: moved to heap: d"; got[kept["newDigest"]] != want {
			t.Errorf("newDigest kept because %q, want %q", got[kept["newDigest"]], want)
		}
		if len(got) != len(kept) {
			t.Errorf("tests=%v: %d kept inlined, want %d: %v", tests, len(got), len(kept), got)
		}
		if !tests {
			continue
		}
		// Instrumenting with the answer leaves the kept functions
		// alone, says why, and traces the rest.
		src, err := os.ReadFile(filepath.Join(dir, "inline.go"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := instrument.File(filepath.Join(dir, "inline.go"), src, instrument.Options{Package: "example.com/inline", KeepInlined: got})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range res.Funcs {
			names = append(names, strings.TrimPrefix(f.Name, "example.com/inline."))
		}
		if s := strings.Join(names, " "); strings.Contains(s, "newPoint") || !strings.Contains(s, "Twice ") || !strings.Contains(s, "chain") || !strings.Contains(s, "odds") {
			t.Errorf("instrumented %s", s)
		}
		if len(res.Omitted) != len(kept) {
			t.Errorf("%d functions left out, want the %d kept inlined: %+v", len(res.Omitted), len(kept), res.Omitted)
		}
		for _, o := range res.Omitted {
			if o.Why != instrument.WhyInlined || o.Detail == "" || o.Line == 0 {
				t.Errorf("omitted %+v", o)
			}
		}
	}
}

// TestInlinedBrokenPackage asks about a package that does not compile,
// or whose tests do not: the error is the compiler's, without the report
// it gave of the files that do.
func TestInlinedBrokenPackage(t *testing.T) {
	for _, c := range []struct {
		name, file, src string
		tests           bool
	}{
		{"package", "b.go", "package broken\n\nfunc F() int { return undefined }\n", false},
		{"tests", "b_test.go", "package broken\n\nvar s string = F()\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/broken\n\ngo 1.22\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "f.go"), []byte("package broken\n\nfunc G() int { return 1 }\n\nfunc H() int { return G() }\n"), 0o644)
			if c.tests {
				os.WriteFile(filepath.Join(dir, "b.go"), []byte("package broken\n\nfunc F() int { return 2 }\n"), 0o644)
			}
			os.WriteFile(filepath.Join(dir, c.file), []byte(c.src), 0o644)
			_, err := KeepInlined(InlineQuery{Dir: dir, Packages: []string{"example.com/broken"}, Tests: c.tests})
			if err == nil || !strings.Contains(err.Error(), c.file+":3:") || !strings.Contains(err.Error(), "do not build") || strings.Contains(err.Error(), "can inline") || strings.Contains(err.Error(), "inlining call") {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// TestConstantsDoNotAllocate: a constant put in an interface is reported
// escaping, but allocates nothing; anything else escaping counts.
func TestConstantsDoNotAllocate(t *testing.T) {
	for msg, want := range map[string]bool{
		`"boom" escapes to heap`:      true,
		`"a \"q\" b" escapes to heap`: true,
		`42 escapes to heap`:          true,
		`-1.5e3 escapes to heap`:      true,
		`'x' escapes to heap`:         true,
		`true escapes to heap`:        true,
		`s escapes to heap`:           false,
		`"a" + s escapes to heap`:     false,
		`x + 1 escapes to heap`:       false,
		`&point{...} escapes to heap`: false,
		`moved to heap: d`:            false,
	} {
		if got := constRE.MatchString(msg); got != want {
			t.Errorf("%s: constant %v, want %v", msg, got, want)
		}
	}
}

func TestPlainName(t *testing.T) {
	for in, want := range map[string]string{
		"gen[go.shape.int]":       "gen",
		"(*T[go.shape.int]).M":    "(*T).M",
		"pkg.F[go.shape.[]uint8]": "pkg.F",
		"main.func1":              "main.func1",
		"(*point).norm":           "(*point).norm",
	} {
		if got := plainName(in); got != want {
			t.Errorf("plainName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReplayedReport: the go command replays a cached report as it was
// printed, its paths relative to where the run that compiled it ran (a
// build from cmd/calltrail of ../../examples/rpc, replayed to one from
// the module's root): the files are found in their package's directory.
func TestReplayedReport(t *testing.T) {
	root := t.TempDir()
	pkgDir := filepath.Join(root, "examples", "rpc")
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkgDir, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	report := "# example.com/m/examples/rpc\n" +
		"../../examples/rpc/main.go:28:6: can inline service.Echo\n" +
		"../../examples/rpc/main.go:30:9: moved to heap: s\n" +
		"examples/rpc/main.go:41:6: can inline nowhere.Write\n" +
		"/usr/local/go/src/sync/atomic/type.go:58:6: can inline atomic.(*Pointer[string]).Load\n"
	r := parseInlining(root, map[string]string{"example.com/m/examples/rpc": pkgDir}, []byte(report))
	file := filepath.Join(pkgDir, "main.go")
	decls := r.decls["example.com/m/examples/rpc"]
	for _, want := range []instrument.Pos{{File: file, Line: 28, Col: 6}, {File: file, Line: 41, Col: 6}, {File: "/usr/local/go/src/sync/atomic/type.go", Line: 58, Col: 6}} {
		if _, ok := decls[want]; !ok {
			t.Errorf("no declaration at %v: %v", want, decls)
		}
	}
	if len(r.heap[file]) != 1 {
		t.Errorf("escapes by file: %v", r.heap)
	}
}

// TestReportFlags checks that the flags the report is compiled with to
// spare the compiler work change nothing it decides: the same functions
// are kept inlined, for the same reasons, as with -m alone. Here and on
// gojq v0.12.17 (59 functions).
func TestReportFlags(t *testing.T) {
	dir, err := filepath.Abs("testdata/inline")
	if err != nil {
		t.Fatal(err)
	}
	q := InlineQuery{Dir: dir, Packages: []string{"example.com/inline"}, Tests: true}
	plain, err := keepInlined(q, "-m")
	if err != nil {
		t.Fatal(err)
	}
	spared, err := keepInlined(q, reportFlags)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) == 0 || !reflect.DeepEqual(plain, spared) {
		t.Errorf("with %q: %v\nwith -m: %v", reportFlags, spared, plain)
	}
	// A compiler that needs a pass reportFlags turn off says so as
	// keepInlined expects, to compile the report again without them.
	if _, err := keepInlined(q, "-m -d=ssa/opt/off"); err == nil || !strings.Contains(err.Error(), requiredPass) {
		t.Errorf("turning off a required pass: %v; want an error with %q", err, requiredPass)
	}
}
