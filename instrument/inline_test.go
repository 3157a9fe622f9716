package instrument

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInlined asks the compiler about testdata/inline, whose comments say
// which of its functions are inlined, and checks that instrumenting with
// the answer leaves those alone.
func TestInlined(t *testing.T) {
	dir, err := filepath.Abs("testdata/inline")
	if err != nil {
		t.Fatal(err)
	}
	at := func(file string, line, col int) Pos { return Pos{filepath.Join(dir, file), line, col} }
	inlined := map[string]Pos{
		"newPoint":    at("inline.go", 8, 6),
		"norm":        at("inline.go", 11, 6),
		"first":       at("inline.go", 17, 6),
		"Twice.func1": at("inline.go", 36, 12),
	}
	kept := map[string]Pos{
		"Squares": at("inline.go", 30, 6),
		"Twice":   at("inline.go", 35, 6),
		"fib":     at("inline.go", 42, 6),
		"Fib":     at("inline.go", 49, 6),
	}
	for _, tests := range []bool{false, true} {
		got, err := Inlined(InlineQuery{Dir: dir, Packages: []string{"example.com/inline"}, Tests: tests})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]Pos{"Sum": at("inline.go", 14, 6), "helper": at("inline_test.go", 6, 6), "TestHelper": at("inline_test.go", 10, 6)}
		for name, pos := range want {
			// Sum is inlined into the external test package, helper
			// into a test; TestHelper is only ever called through a
			// func value.
			if wantIt := tests && name != "TestHelper"; got[pos] != wantIt {
				t.Errorf("tests=%v: %s inlined = %v, want %v", tests, name, got[pos], wantIt)
			}
		}
		for name, pos := range inlined {
			if !got[pos] {
				t.Errorf("tests=%v: %s (%v) not reported inlined; got %v", tests, name, pos, got)
			}
		}
		for name, pos := range kept {
			if got[pos] {
				t.Errorf("tests=%v: %s reported inlined", tests, name)
			}
		}
		if !tests {
			continue
		}
		// Instrumenting with the answer leaves the inlined functions
		// alone, and traces the rest.
		src, err := os.ReadFile(filepath.Join(dir, "inline.go"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := File(filepath.Join(dir, "inline.go"), src, Options{Package: "example.com/inline", Inlined: got})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range res.Funcs {
			names = append(names, strings.TrimPrefix(f.Name, "example.com/inline."))
		}
		if s := strings.Join(names, " "); strings.Contains(s, "newPoint") || !strings.Contains(s, "Twice ") || !strings.Contains(s, "fib") {
			t.Errorf("instrumented %s", s)
		}
		if res.Inlined < 5 {
			t.Errorf("%d functions left to the inliner, want at least 5", res.Inlined)
		}
	}
}

// TestInlinedBrokenPackage asks about a package that does not compile.
func TestInlinedBrokenPackage(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/broken\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.go"), []byte("package broken\n\nfunc F() int { return undefined }\n"), 0o644)
	_, err := Inlined(InlineQuery{Dir: dir, Packages: []string{"example.com/broken"}})
	if err == nil || !strings.Contains(err.Error(), "undefined") || !strings.Contains(err.Error(), "do not build") {
		t.Errorf("err = %v", err)
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
