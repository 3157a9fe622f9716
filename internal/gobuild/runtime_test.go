package gobuild

import (
	"bytes"
	"go/build/constraint"
	"go/version"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calltrail/calltrail"
	"github.com/calltrail/calltrail/instrument"
)

func TestWithGoVersion(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"package p\n", "//go:build go1.22\n\npackage p\n"},
		{"// Package p does.\npackage p\n", "//go:build go1.22\n\n// Package p does.\npackage p\n"},
		{"//go:build calltrail\n\npackage p\n", "//go:build go1.22 && (calltrail)\n\npackage p\n"},
		{"// Copyright\n\n//go:build a || b\n\npackage p\n", "// Copyright\n\n//go:build go1.22 && (a || b)\n\npackage p\n"},
		// A constraint-like line past the header is code's, not one.
		{"package p\n\n//go:build x\n", "//go:build go1.22\n\npackage p\n\n//go:build x\n"},
	} {
		if got := string(withGoVersion([]byte(tc.src))); got != tc.want {
			t.Errorf("withGoVersion(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
}

// TestRuntimeModuleVersion checks the runtime's copy: its module file
// declares no Go version, and each of its Go files is built at
// runtimeLang, which is calltrail's go line, and as the file was before.
func TestRuntimeModuleVersion(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	dir, err := RuntimeModule(calltrail.Source())
	if err != nil {
		t.Fatal(err)
	}
	if mod, _ := os.ReadFile(filepath.Join(dir, "go.mod")); bytes.Contains(mod, []byte("\ngo ")) {
		t.Errorf("the copy's go.mod declares a Go version:\n%s", mod)
	}
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(gomod), "\n") {
		if v, ok := strings.CutPrefix(line, "go "); ok {
			// The language version: go 1.22.0 is go1.22.
			parts := strings.SplitN(strings.TrimSpace(v), ".", 3)
			if lang := "go" + strings.Join(parts[:min(2, len(parts))], "."); lang != runtimeLang {
				t.Errorf("go.mod says go %s, runtimeLang is %s", v, runtimeLang)
			}
		}
	}
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".go") {
			return err
		}
		n++
		data, _ := os.ReadFile(p)
		var expr constraint.Expr
		for _, line := range strings.Split(string(data), "\n") {
			if constraint.IsGoBuild(line) {
				if expr, err = constraint.Parse(line); err != nil {
					t.Errorf("%s: %v", p, err)
				}
				break
			}
		}
		if expr == nil || version.Compare(constraint.GoVersion(expr), runtimeLang) < 0 {
			t.Errorf("%s: constraint %v, want one of %s at least", p, expr, runtimeLang)
		}
		return nil
	})
	if n < 50 {
		t.Errorf("%d Go files in the copy", n)
	}
}

// TestRuntimeDeps: a traced build compiles calltrail's runtime, and what
// it imports that the program does not, before any instrumented package,
// so the runtime leaves out what it can do without there: the trace reader
// (it writes the records package tracefile reads) and runtime/pprof (the
// profiles come in a package of their own, linked by the main package).
// That the copy's module builds is checked by every traced build.
func TestRuntimeDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", strings.Join(buildTags, ","), instrument.RuntimePath).Output()
	if err != nil {
		t.Fatal(err)
	}
	deps := strings.Fields(string(out))
	for _, p := range []string{instrument.RuntimePath + "/tracefile", "runtime/pprof", "compress/flate", "encoding/hex"} {
		if slices.Contains(deps, p) {
			t.Errorf("the runtime imports %s", p)
		}
	}
}
