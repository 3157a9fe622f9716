package gobuild

import (
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/calltrail/calltrail/instrument"
)

type SourceFile struct {
	Path string
	Pkg  string // import path, for function names; "" if unknown
	Dir  string // where the go command finds the package
}

// InlinedIn asks the compiler which functions of the files' packages to
// keep inlined (see KeepInlined), from their source without
// calltrail's instrumentation.
func InlinedIn(files []SourceFile, flags []string, tests bool) (map[instrument.Pos]string, error) {
	work, err := os.MkdirTemp("", "calltrail-inline-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	byDir := map[string][]string{} // packages, by where to ask about them
	replace := map[string]string{}
	for _, f := range files {
		if f.Pkg == "" {
			return nil, fmt.Errorf("%s: not in a package the go command can build, so the compiler cannot say what it inlines; --inlined instruments every function", f.Path)
		}
		pkg := strings.TrimSuffix(f.Pkg, "_test")
		if !slices.Contains(byDir[f.Dir], pkg) {
			byDir[f.Dir] = append(byDir[f.Dir], pkg)
		}
		src, err := os.ReadFile(f.Path)
		if err != nil {
			return nil, err
		}
		// A file that does not parse gets its own error, which
		// --inlined would give too, not the compiler's report's.
		if _, err := parser.ParseFile(token.NewFileSet(), f.Path, src, parser.SkipObjectResolution); err != nil {
			return nil, err
		}
		if !instrument.Instrumented(src) {
			continue
		}
		orig, err := instrument.Undo(src)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f.Path, err)
		}
		abs, err := filepath.Abs(f.Path)
		if err != nil {
			return nil, err
		}
		tmp := filepath.Join(work, fmt.Sprintf("%d_%s", len(replace), filepath.Base(f.Path)))
		if err := os.WriteFile(tmp, orig, 0o644); err != nil {
			return nil, err
		}
		replace[abs] = tmp
	}
	overlay := ""
	if len(replace) > 0 {
		if overlay, err = writeOverlay(work, replace); err != nil {
			return nil, err
		}
	}
	all := map[instrument.Pos]string{}
	for dir, pkgs := range byDir {
		set, err := KeepInlined(InlineQuery{Dir: dir, Flags: flags, Packages: pkgs, Tests: tests, Overlay: overlay})
		if err != nil {
			return nil, fmt.Errorf("%v; --inlined instruments every function without asking", err)
		}
		maps.Copy(all, set)
	}
	return all, nil
}

// SourceFiles lists the files args name: .go files, or packages as the
// go command takes them, chosen by build flags. It also returns the files
// of those packages that the build constraints leave out. It refuses
// packages of the Go distribution and of the module cache, which are not
// the user's to change.
func SourceFiles(args, flags []string, tests bool) (files []SourceFile, ignored []string, err error) {
	modcache := ""
	// notYours refuses the packages of the Go distribution and of the
	// module cache, named by a pattern or by one of their files.
	// inCache reports whether dir is in the module cache: a module there
	// is not the user's though the go command, run inside it, takes it
	// for the main module.
	inCache := func(dir string) bool {
		if modcache == "" {
			modcache = goEnv(".", "GOMODCACHE")
		}
		abs, err := filepath.Abs(dir)
		return err == nil && modcache != "" && strings.HasPrefix(abs, modcache+string(filepath.Separator))
	}
	const cacheWhy = "in the module cache, not yours to change; calltrail build, run and test trace your dependencies in copies of their own"
	notYours := func(p Package) error {
		if p.Standard {
			return fmt.Errorf("%s: part of the Go distribution, not yours to change; calltrail build, run and test trace your code and your modules' dependencies", p.ImportPath)
		}
		if inCache(p.Dir) {
			return fmt.Errorf("%s: %s", p.ImportPath, cacheWhy)
		}
		return nil
	}
	for _, a := range args {
		// A directory of the cache named by its path: the go command
		// would say only that it is outside the main module, or, outside
		// any module, that there is no go.mod.
		if dir := strings.TrimSuffix(filepath.ToSlash(a), "/..."); (filepath.IsAbs(dir) || strings.HasPrefix(dir, ".")) && inCache(dir) {
			return nil, nil, fmt.Errorf("%s: %s", a, cacheWhy)
		}
		if strings.HasSuffix(a, ".go") {
			if _, err := os.Stat(a); err != nil {
				return nil, nil, err
			}
			if inCache(filepath.Dir(a)) {
				return nil, nil, fmt.Errorf("%s: %s", a, cacheWhy)
			}
			pkg := ""
			if ps, err := List(filepath.Dir(a), flags, false, "."); err == nil && len(ps) == 1 {
				if err := notYours(ps[0]); err != nil {
					return nil, nil, fmt.Errorf("%s: %v", a, err)
				}
				if ps[0].Error == nil {
					pkg = ps[0].ImportPath
				}
			}
			files = append(files, SourceFile{a, pkg, filepath.Dir(a)})
			continue
		}
		pkgs, err := List(".", flags, false, a)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range pkgs {
			if p.Error != nil && len(p.GoFiles)+len(p.CgoFiles) == 0 {
				return nil, nil, fmt.Errorf("%s: %s", a, p.Error.Err)
			}
			if err := notYours(p); err != nil {
				return nil, nil, err
			}
			names := append(append([]string(nil), p.GoFiles...), p.CgoFiles...)
			if tests {
				names = append(names, p.TestGoFiles...)
				names = append(names, p.XTestGoFiles...)
			}
			for _, n := range names {
				pkg := p.ImportPath
				if strings.HasSuffix(n, "_test.go") && slices.Contains(p.XTestGoFiles, n) {
					pkg += "_test"
				}
				files = append(files, SourceFile{filepath.Join(p.Dir, n), pkg, "."})
			}
			for _, n := range p.IgnoredGoFiles {
				if tests || !strings.HasSuffix(n, "_test.go") {
					ignored = append(ignored, filepath.Join(p.Dir, n))
				}
			}
		}
	}
	return files, ignored, nil
}

// writeOverlay writes the go command's -overlay file replacing the files
// replace names by the files they map to, in work, and returns its path.
func writeOverlay(work string, replace map[string]string) (string, error) {
	js, err := json.Marshal(struct{ Replace map[string]string }{replace})
	if err != nil {
		return "", err
	}
	overlay := filepath.Join(work, "overlay.json")
	return overlay, os.WriteFile(overlay, js, 0o644)
}
