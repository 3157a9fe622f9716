package gobuild

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"

	"github.com/calltrail/calltrail/instrument"
)

// keep returns, of the inlined functions (with where their calls were
// inlined), those whose body holds a value the compiler moves or lets
// escape to the heap, unless it does so at every call inlined too, and
// that are not recursive: each with the compiler's first such line.
// Files are read through the overlay, which maps a file to the copy the
// compiler read; files lists, by directory and package name, the files
// the build compiles, to tell recursion from.
func (r inlineReport) keep(inlined map[instrument.Pos][]instrument.Pos, overlay map[string]string, files map[string][]string) (map[instrument.Pos]string, error) {
	byFile := map[string][]instrument.Pos{}
	for p := range inlined {
		if len(r.heap[p.File]) > 0 {
			byFile[p.File] = append(byFile[p.File], p)
		}
	}
	kept := map[instrument.Pos]string{}
	graphs := map[string]*callGraph{} // by directory and package name
	for file, ps := range byFile {
		fset := token.NewFileSet()
		f, err := parseThrough(fset, file, overlay)
		if err != nil {
			return nil, err
		}
		funcs := funcsAt(fset, f)
		for _, p := range ps {
			fn, ok := funcs[[2]int{p.Line, p.Col}]
			if !ok {
				continue
			}
			body := own(fset, fn, within(r.heap[file], fset.Position(fn.from), fset.Position(fn.body.Rbrace)))
			if len(body) == 0 || !r.sparesSome(body, inlined[p]) {
				continue
			}
			e := body[0]
			if fn.decl != nil {
				key := filepath.Dir(file) + "\x00" + f.Name.Name
				g := graphs[key]
				if g == nil {
					if g, err = packageGraph(filepath.Dir(file), f.Name.Name, overlay, files[key]); err != nil {
						return nil, err
					}
					graphs[key] = g
				}
				if g.recursive(instrument.DeclName(fn.decl)) {
					continue
				}
			}
			kept[p] = fmt.Sprintf("%s:%d: %s", filepath.Base(file), e.line, e.msg)
		}
	}
	return kept, nil
}

// A function found at the position the compiler reports it at.
type funcAt struct {
	decl *ast.FuncDecl // nil for a function literal
	// from is its func keyword: a parameter moved to the heap is
	// reported where the parameter is declared.
	from token.Pos
	body *ast.BlockStmt
}

// funcsAt indexes f's functions with a body by the line and column the
// compiler reports them at (see Pos).
func funcsAt(fset *token.FileSet, f *ast.File) map[[2]int]funcAt {
	m := map[[2]int]funcAt{}
	at := func(p token.Pos) [2]int {
		pos := fset.Position(p)
		return [2]int{pos.Line, pos.Column}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Body != nil {
				p := n.Name.Pos()
				if n.Recv != nil {
					p = n.Recv.Opening
				}
				m[at(p)] = funcAt{n, n.Type.Func, n.Body}
			}
		case *ast.FuncLit:
			m[at(n.Pos())] = funcAt{nil, n.Type.Func, n.Body}
		}
		return true
	})
	return m
}

// within returns the escapes between from and to, inclusive.
func within(es []escape, from, to token.Position) []escape {
	var out []escape
	for _, e := range es {
		if e.between(from, to) {
			out = append(out, e)
		}
	}
	return out
}

// between reports whether e is between from and to, inclusive.
func (e escape) between(from, to token.Position) bool {
	after := e.line > from.Line || e.line == from.Line && e.col >= from.Column
	before := e.line < to.Line || e.line == to.Line && e.col <= to.Column
	return after && before
}

// own returns the escapes es of fn's body that are its own: not those of
// the function literals in it, past their func keyword, which happen
// when a literal runs, wherever fn is inlined. The literal's own
// allocation, reported at its func keyword, is fn's.
func own(fset *token.FileSet, fn funcAt, es []escape) []escape {
	var lits [][2]token.Position // from just past the func keyword to the closing brace
	ast.Inspect(fn.body, func(n ast.Node) bool {
		if l, ok := n.(*ast.FuncLit); ok {
			lits = append(lits, [2]token.Position{fset.Position(l.Type.Func + 1), fset.Position(l.Body.Rbrace)})
			return false
		}
		return true
	})
	out := es[:0:0]
	for _, e := range es {
		if !slices.ContainsFunc(lits, func(l [2]token.Position) bool { return e.between(l[0], l[1]) }) {
			out = append(out, e)
		}
	}
	return out
}

// sparesSome reports whether inlining spares the heap anything, at one
// of the calls inlined at least: whether one of them lacks one of the
// escapes of the function's body. The compiler reports what escapes in
// an inlined body at the call, in the body's words (moved to heap: d):
// a value that escapes wherever the function is inlined escapes as well
// from a call of it, and inlining keeps nothing off the heap.
func (r inlineReport) sparesSome(body []escape, sites []instrument.Pos) bool {
	for _, s := range sites {
		for _, e := range body {
			found := false
			for _, at := range r.heap[s.File] {
				if at.line == s.Line && at.col == s.Col && at.msg == e.msg {
					found = true
					break
				}
			}
			if !found {
				return true
			}
		}
	}
	return false
}

// parseThrough parses the file at path as the compiler read it: its
// replacement in the overlay, if it has one.
func parseThrough(fset *token.FileSet, path string, overlay map[string]string) (*ast.File, error) {
	src := path
	if o, ok := overlay[path]; ok {
		src = o
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	return parser.ParseFile(fset, path, data, parser.SkipObjectResolution)
}

// readOverlay returns the replacements of a go command overlay file.
func readOverlay(path string) map[string]string {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var o struct{ Replace map[string]string }
	if json.Unmarshal(data, &o) != nil {
		return nil
	}
	return o.Replace
}

// callGraph is who may call whom among a package's functions, by the
// names they are declared with (see declName), from their source alone:
// a call of a name calls the package's function of that name, and a
// call of a method calls every method of that name. It claims more
// calls than there are, never fewer among the package's own functions,
// so that a recursive function is never taken for one that is not.
type callGraph struct {
	calls map[string][]string
}

// packageGraph builds the call graph of the package named name from the
// files of dir the build compiles, names, tests included; from all of its
// .go files when names is empty. All of them were every platform's: 59 MB
// in modernc.org/sqlite/lib, parsed on every build, against 8 MB.
func packageGraph(dir, name string, overlay map[string]string, names []string) (*callGraph, error) {
	var paths []string
	for _, n := range names {
		paths = append(paths, filepath.Join(dir, n))
	}
	if len(paths) == 0 {
		var err error
		if paths, err = filepath.Glob(filepath.Join(dir, "*.go")); err != nil {
			return nil, err
		}
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, path := range paths {
		f, err := parseThrough(fset, path, overlay)
		if err != nil || f.Name.Name != name {
			continue // another package, or one the build does not take
		}
		files = append(files, f)
	}
	return newCallGraph(files), nil
}

func newCallGraph(files []*ast.File) *callGraph {
	funcs := map[string]bool{}       // plain names of functions
	methods := map[string][]string{} // method name -> declared names
	for _, f := range files {
		for _, d := range f.Decls {
			if d, ok := d.(*ast.FuncDecl); ok {
				if d.Recv == nil {
					funcs[d.Name.Name] = true
				} else {
					methods[d.Name.Name] = append(methods[d.Name.Name], instrument.DeclName(d))
				}
			}
		}
	}
	g := &callGraph{calls: map[string][]string{}}
	for _, f := range files {
		for _, d := range f.Decls {
			d, ok := d.(*ast.FuncDecl)
			if !ok || d.Body == nil {
				continue
			}
			from := instrument.DeclName(d)
			ast.Inspect(d.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				fun := ast.Unparen(call.Fun)
				switch x := fun.(type) {
				case *ast.IndexExpr:
					fun = x.X
				case *ast.IndexListExpr:
					fun = x.X
				}
				switch x := fun.(type) {
				case *ast.Ident:
					if funcs[x.Name] {
						g.calls[from] = append(g.calls[from], genericName(x.Name, files))
					}
				case *ast.SelectorExpr:
					g.calls[from] = append(g.calls[from], methods[x.Sel.Name]...)
				}
				return true
			})
		}
	}
	return g
}

// genericName returns the declared name of the function called name:
// name[...] if it has type parameters.
func genericName(name string, files []*ast.File) string {
	for _, f := range files {
		for _, d := range f.Decls {
			if d, ok := d.(*ast.FuncDecl); ok && d.Recv == nil && d.Name.Name == name {
				return instrument.DeclName(d)
			}
		}
	}
	return name
}

// recursive reports whether fn may call itself, directly or through
// other functions of its package.
func (g *callGraph) recursive(fn string) bool {
	seen := map[string]bool{}
	stack := append([]string(nil), g.calls[fn]...)
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if c == fn {
			return true
		}
		if !seen[c] {
			seen[c] = true
			stack = append(stack, g.calls[c]...)
		}
	}
	return false
}
