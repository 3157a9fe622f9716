package instrument

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"hash/fnv"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

// RuntimePath is the import path of the calltrail runtime.
const RuntimePath = "github.com/calltrail/calltrail"

// Pos names a function by where the compiler reports it: the absolute
// path of its file, and the line and column of its name (of the func
// keyword, for a function literal).
type Pos struct {
	File      string
	Line, Col int
}

// Options choose what File instruments.
type Options struct {
	// Package is the import path that prefixes function names, as Go's
	// runtime writes them: "main" for a command, "github.com/google/uuid"
	// for a library. Empty means the file's package name.
	Package string
	// Runtime is the import path of the runtime; empty means RuntimePath.
	Runtime string
	// Funcs, if set, instruments only functions whose name matches.
	Funcs *regexp.Regexp
	// Exclude, if set, leaves out functions whose name matches.
	Exclude *regexp.Regexp
	// KeepInlined, if set, holds the functions to leave to the
	// compiler's inliner, each with the compiler's line that says why
	// (see package internal/gobuild): they are left alone, so that they stay inlined
	// and their time counts as their callers'.
	KeepInlined map[Pos]string
	// Errors records the error each call of a function returns, when its
	// last result is an error: the result, named if it is not, is read
	// when the call ends (see calltrail.ExitErr). Naming results changes
	// nothing a program can see: no statement could refer to them
	// before, and a bare return needs them named already. The names say
	// how they came (see Undo), which takes them out again.
	Errors bool
	// Args, if set, records the arguments and results of the functions
	// whose name matches, of the kinds calltrail.Arg says: parameters and
	// results without names, or named _, are named, as for Errors.
	Args *regexp.Regexp
	// Imports are packages the file imports for their effects, beside
	// the runtime: how a build links them into a package that takes no
	// file of its own. Undo leaves them.
	Imports []string
	// LineFile, if set, makes the result a copy to compile in place of
	// the file, elsewhere (an overlay), that keeps the file's positions
	// as LineFile's: it opens with a //line directive naming LineFile,
	// so that compiler errors, panics and the trace name the user's file
	// and lines, and, as cmd/cover does, a /*line*/ directive follows
	// each insertion with more of its line after it, so that errors keep
	// their columns. (Not in a file with line directives of its own,
	// whose positions are a generator's input, or instrumented on disk.)
	LineFile string
	// Inits is how many init functions the package's files before this
	// one declare, in the order the go command hands them to the
	// compiler (its GoFiles, CgoFiles, then TestGoFiles), which numbers
	// them across the package: this file's first is init.<Inits>. The
	// sum of the Result.Inits before it.
	Inits int
}

// Func describes one instrumented function.
type Func struct {
	Name string // as Go's runtime names it
	Line int
}

// Result is what File did to a file.
type Result struct {
	Src     []byte    // the instrumented source; the input if nothing changed
	Funcs   []Func    // functions instrumented, in order of their guards
	Omitted []Omitted // functions left untraced, and why
	Skipped string    // why the file was left alone, if it was
	Inits   int       // init functions the file declares, for the next file's Options.Inits
}

// Omitted is a function left untraced, and why.
type Omitted struct {
	Name string // as Go's runtime names it
	Line int
	Why  Why
	// Detail says more: for WhyInlined, the compiler's line about the
	// value inlining keeps off the heap.
	Detail string
}

// Why is the reason a function is left untraced.
type Why string

// The reasons a function is left untraced.
const (
	WhyInlined   Why = tracefile.WhyInlined // to keep a value off the heap
	WhyFuncs     Why = tracefile.WhyFuncs
	WhyExclude   Why = tracefile.WhyExclude
	WhyIgnored   Why = tracefile.WhyIgnored
	WhyNosplit   Why = tracefile.WhyNosplit
	WhyGenerated Why = tracefile.WhyGenerated
	WhyNoBody    Why = tracefile.WhyNoBody
)

// Names used in instrumented files; the leading underscores keep them out
// of the way of the user's own names.
const (
	importName = "__ct"
	tablePref  = "__ctf_"
)

// File instruments the Go source src of the named file.
func File(filename string, src []byte, opts Options) (Result, error) {
	orig := src
	src, err := Undo(src)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", filename, err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return Result{}, err
	}
	pkg := opts.Package
	if pkg == "" {
		pkg = f.Name.Name
	}
	if f.Name.Name == "main" {
		pkg = "main" // Go names the functions of every command main.*
	}
	v := &visitor{fset: fset, opts: opts, pkg: pkg, table: tableName(filename), manual: runtimeName(f)}
	switch {
	case ast.IsGenerated(f):
		v.skip = WhyGenerated
	case fileIgnored(f):
		v.skip = WhyIgnored
	}
	if opts.KeepInlined != nil {
		if v.abs, err = filepath.Abs(filename); err != nil {
			return Result{}, err
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			v.funcDecl(d)
		case *ast.GenDecl:
			// Function literals in package-level initialisers run in
			// the package's init.
			v.outer, v.lits = pkg+".init", 0
			ast.Inspect(d, v.lit)
		}
	}
	switch {
	case v.skip == WhyGenerated:
		return Result{Src: src, Omitted: v.omitted, Skipped: "generated file", Inits: v.inits}, nil
	case v.skip == WhyIgnored:
		return Result{Src: src, Omitted: v.omitted, Skipped: "//calltrail:ignore", Inits: v.inits}, nil
	case len(v.funcs) == 0:
		return Result{Src: src, Omitted: v.omitted, Skipped: "no functions to instrument", Inits: v.inits}, nil
	}
	runtimePath := opts.Runtime
	if runtimePath == "" {
		runtimePath = RuntimePath
	}
	// The edits, by offset: the import after the package name, a guard
	// after each function's opening brace (and, with Errors, names for
	// its results), the table after the last byte.
	imports := fmt.Sprintf("; import %s %q", importName, runtimePath)
	for _, path := range opts.Imports {
		imports += fmt.Sprintf("; import _ %q", path)
	}
	edits := []edit{{at: fset.Position(f.Name.End()).Offset, text: imports}}
	for i, fn := range v.funcs {
		edits = append(edits, fn.results...)
		edits = append(edits, edit{at: fn.at, text: guard(v.table, i, fn)})
	}
	var out bytes.Buffer
	out.Grow(len(src) + 120*len(v.funcs))
	if opts.LineFile != "" {
		// The directive is a line of its own, and says the line after
		// it is line 1. A byte-order mark may only open a file: the
		// directive takes its place.
		fmt.Fprintf(&out, "//line %s:1:1\n", opts.LineFile)
		if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
			edits = append(edits, edit{at: 0, del: 3})
		}
		if len(src) == len(orig) && !hasLineDirective(f) && !strings.Contains(opts.LineFile, "*/") {
			keepColumns(fset.File(f.Pos()), src, edits, opts.LineFile)
		}
	}
	apply(&out, src, edits)
	if !bytes.HasSuffix(src, []byte("\n")) {
		out.WriteByte('\n') // Undo knows from the missing final newline
	}
	// A blank line before the table, so that a comment ending the file
	// stays the file's: before the table, it would be the table's doc
	// comment, which gofmt rewrites, and --undo could not give it back.
	if bytes.HasSuffix(src, []byte("\r\n")) {
		out.WriteString("\r\n")
	} else {
		out.WriteByte('\n')
	}
	fmt.Fprintf(&out, "var %s = [...]%s.Func{", v.table, importName)
	res := Result{Omitted: v.omitted, Inits: v.inits}
	for i, fn := range v.funcs {
		if i > 0 {
			out.WriteString(", ")
		}
		fmt.Fprintf(&out, "{Name: %q, File: %q, Line: %d}", fn.name, fn.file, fn.line)
		res.Funcs = append(res.Funcs, Func{Name: fn.name, Line: fn.line})
	}
	out.WriteString("}")
	switch {
	case bytes.HasSuffix(src, []byte("\r\n")):
		out.WriteString("\r\n") // the file's line ends, so editors keep them
	case bytes.HasSuffix(src, []byte("\n")):
		out.WriteByte('\n')
	}
	res.Src = out.Bytes()
	return res, nil
}

// hasLineDirective reports whether f has a line directive, of either
// form.
func hasLineDirective(f *ast.File) bool {
	for _, g := range f.Comments {
		for _, c := range g.List {
			if strings.HasPrefix(c.Text, "//line ") || strings.HasPrefix(c.Text, "/*line ") {
				return true
			}
		}
	}
	return false
}

// keepColumns adds to the text of each edit in src (of file f) that has
// more of its line after it a /*line*/ directive giving the position, in
// file name, of the byte after it: the compiler then reports a column
// past the edit as the user's file has it.
func keepColumns(f *token.File, src []byte, edits []edit, name string) {
	for i, e := range edits {
		end := e.at + e.del
		rest := src[end:]
		if j := bytes.IndexByte(rest, '\n'); j >= 0 {
			rest = rest[:j]
		}
		if len(bytes.TrimSpace(rest)) == 0 {
			continue
		}
		pos := f.PositionFor(f.Pos(end), false)
		edits[i].text += fmt.Sprintf("/*line %s:%d:%d*/", name, pos.Line, pos.Column)
	}
}

// The guard's text, in parts: the one definition that guard writes and
// guardRE, which Undo uses, recognizes. TABLE and INDEX name the entry of
// the function table, ID a parameter or result, and EXIT is one of the
// exits. A guard is
//
//	guardOpen (guardArg)* (guardDefer | guardDeferFunc (guardResult)* guardFuncEnd) guardClose
const (
	guardOpen      = " if __ct.Enabled { if c := __ct.Enter(&TABLE[INDEX]); c != 0 {"
	guardArg       = " __ct.Arg(c, ID);"
	guardDefer     = " defer EXIT"
	guardDeferFunc = " defer func() {"
	guardResult    = " __ct.Result(c, ID);"
	guardFuncEnd   = " EXIT }()"
	guardClose     = " } };"
	guardExit      = "__ct.Exit(c)"
	guardExitErr   = "__ct.ExitErr(c, &ID)"
)

// guard is the text put after the opening brace of function fn, the
// i'th of the table.
func guard(table string, i int, fn fn) string {
	exit := guardExit
	if fn.errName != "" {
		exit = strings.Replace(guardExitErr, "ID", fn.errName, 1)
	}
	var b strings.Builder
	b.WriteString(strings.NewReplacer("TABLE", table, "INDEX", strconv.Itoa(i)).Replace(guardOpen))
	for _, a := range fn.args {
		b.WriteString(strings.Replace(guardArg, "ID", a, 1))
	}
	if fn.args == nil && fn.vals == nil {
		b.WriteString(strings.Replace(guardDefer, "EXIT", exit, 1))
	} else {
		b.WriteString(guardDeferFunc)
		for _, r := range fn.vals {
			b.WriteString(strings.Replace(guardResult, "ID", r, 1))
		}
		b.WriteString(strings.Replace(guardFuncEnd, "EXIT", exit, 1))
	}
	b.WriteString(guardClose)
	return b.String()
}

// The names given to parameters and results say how they came, so that
// Undo can take them out whatever a formatter did since: __cta0, __cta1...
// for parameters without names, __ctr0, __ctr1... and __ctErr for results
// without; the same with a trailing _ for those named _; and __ctp0 or
// __ctpErr for a lone result that had neither name nor parentheses.
const (
	errResultName = "__ctErr"
	blankSuffix   = "_"
)

// results returns the names of ft's results, and the error's among them
// ("" if the last result is no error), with the edits that give them
// names where needed: for all of them if all is set (the values of
// --args), else only when the last is an error.
func (v *visitor) results(ft *ast.FuncType, all bool) (names []string, errName string, edits []edit) {
	res := ft.Results
	if res == nil || len(res.List) == 0 {
		return nil, "", nil
	}
	last := res.List[len(res.List)-1]
	isErr := false
	if id, ok := last.Type.(*ast.Ident); ok && id.Name == "error" {
		isErr = true
	}
	if !isErr && !all {
		return nil, "", nil
	}
	off := func(p token.Pos) int { return v.fset.Position(p).Offset }
	if len(last.Names) > 0 {
		i := 0
		for fi, f := range res.List {
			for ni, n := range f.Names {
				lastOne := fi == len(res.List)-1 && ni == len(f.Names)-1
				name := n.Name
				if name == "_" && (all || lastOne) {
					name = fmt.Sprintf("__ctr%d", i) + blankSuffix
					if lastOne && isErr {
						name = errResultName + blankSuffix
					}
					edits = append(edits, edit{at: off(n.Pos()), del: 1, text: name})
				}
				names = append(names, name)
				i++
			}
		}
		if isErr {
			errName = names[len(names)-1]
		}
		return names, errName, edits
	}
	paren := res.Opening == token.NoPos
	if paren {
		edits = append(edits, edit{at: off(last.Type.Pos()), text: "("})
	}
	for i, f := range res.List {
		name := fmt.Sprintf("__ctr%d", i)
		if i == len(res.List)-1 && isErr {
			name = errResultName
		}
		if paren {
			name = "__ctp" + strings.TrimPrefix(name, "__ctr")
			if isErr {
				name = "__ctpErr"
			}
		}
		names = append(names, name)
		edits = append(edits, edit{at: off(f.Type.Pos()), text: name + " "})
	}
	if paren {
		edits = append(edits, edit{at: off(last.Type.End()), text: ")"})
	}
	if isErr {
		errName = names[len(names)-1]
	}
	return names, errName, edits
}

// params returns the names of ft's parameters, with the edits that name
// those without a name, or named _: __cta0, __cta1...
func (v *visitor) params(ft *ast.FuncType) (names []string, edits []edit) {
	off := func(p token.Pos) int { return v.fset.Position(p).Offset }
	i := 0
	for _, f := range ft.Params.List {
		if len(f.Names) == 0 {
			name := fmt.Sprintf("__cta%d", i)
			names = append(names, name)
			edits = append(edits, edit{at: off(f.Type.Pos()), text: name + " "})
			i++
			continue
		}
		for _, n := range f.Names {
			name := n.Name
			if name == "_" {
				name = fmt.Sprintf("__cta%d", i) + blankSuffix
				edits = append(edits, edit{at: off(n.Pos()), del: 1, text: name})
			}
			names = append(names, name)
			i++
		}
	}
	return names, edits
}

// tableName is the function table's name for a file: unique among the
// files of a package, whose base names differ.
func tableName(filename string) string {
	h := fnv.New32a()
	h.Write([]byte(filepath.Base(filename)))
	return fmt.Sprintf("%s%08x", tablePref, h.Sum32())
}

// fileIgnored reports a //calltrail:ignore comment before the package clause.
func fileIgnored(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		if hasDirective(g, "//calltrail:ignore") {
			return true
		}
	}
	return false
}

func hasDirective(g *ast.CommentGroup, d string) bool {
	if g == nil {
		return false
	}
	for _, c := range g.List {
		if c.Text == d || strings.HasPrefix(c.Text, d+" ") {
			return true
		}
	}
	return false
}

type fn struct {
	name string
	file string // as the runtime will name it (see where)
	line int
	at   int // offset just after the opening brace
	// With Options.Errors, for a function whose last result is an error:
	// its name; with Options.Args, the names of its parameters and
	// results, recorded; and the edits that name them.
	errName    string
	args, vals []string
	results    []edit
}

// An edit inserts text at offset at, in place of the del bytes there.
type edit struct {
	at   int
	del  int
	text string
}

// apply writes src to out with the edits made, which do not overlap;
// edits at one offset are made in the order given.
func apply(out *bytes.Buffer, src []byte, edits []edit) {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
	last := 0
	for _, e := range edits {
		out.Write(src[last:e.at])
		out.WriteString(e.text)
		last = e.at + e.del
	}
	out.Write(src[last:])
}

type visitor struct {
	fset  *token.FileSet
	opts  Options
	pkg   string
	table string
	funcs []fn

	outer  string // name of the enclosing top-level function
	lits   int    // function literals numbered so far in outer
	inits  int    // init functions seen
	nested int    // depth of the literal being named, 0 outside any

	manual string // the file's name for the runtime package, "" if not imported

	abs     string    // the file's absolute path, to look functions up in opts.KeepInlined
	skip    Why       // why the whole file is left alone, if it is
	omitted []Omitted // functions left untraced
}

// omit records a function left untraced.
func (v *visitor) omit(name string, decl token.Pos, why Why, detail string) {
	_, line := v.where(decl)
	v.omitted = append(v.omitted, Omitted{Name: name, Line: line, Why: why, Detail: detail})
}

// tracesItself reports a body that starts with defer calltrail.Trace()():
// the function is traced already, by hand.
func (v *visitor) tracesItself(body *ast.BlockStmt) bool {
	if v.manual == "" || len(body.List) == 0 {
		return false
	}
	d, ok := body.List[0].(*ast.DeferStmt)
	if !ok {
		return false
	}
	inner, ok := d.Call.Fun.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := inner.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Trace" {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == v.manual
}

// runtimeName returns the name under which f imports the runtime.
func runtimeName(f *ast.File) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == RuntimePath {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "calltrail"
		}
	}
	return ""
}

// add instruments a function named name with the given type and body,
// declared at decl (its func keyword) and reported by the compiler at pos
// (see Pos).
func (v *visitor) add(name string, ft *ast.FuncType, body *ast.BlockStmt, decl, pos token.Pos) {
	if v.skip != "" {
		v.omit(name, decl, v.skip, "")
		return
	}
	if v.tracesItself(body) {
		return
	}
	if v.opts.Funcs != nil && !v.opts.Funcs.MatchString(name) {
		v.omit(name, decl, WhyFuncs, "")
		return
	}
	if v.opts.Exclude != nil && v.opts.Exclude.MatchString(name) {
		v.omit(name, decl, WhyExclude, "")
		return
	}
	if v.opts.KeepInlined != nil {
		p := v.fset.Position(pos)
		if why, ok := v.opts.KeepInlined[Pos{v.abs, p.Line, p.Column}]; ok {
			v.omit(name, decl, WhyInlined, why)
			return
		}
	}
	file, line := v.where(decl)
	f := fn{name: name, file: file, line: line, at: v.fset.Position(body.Lbrace).Offset + 1}
	values := v.opts.Args != nil && v.opts.Args.MatchString(name)
	if v.opts.Errors || values {
		names, errName, edits := v.results(ft, values)
		if v.opts.Errors {
			f.errName = errName
		}
		f.results = edits
		if values {
			args, pedits := v.params(ft)
			if f.errName != "" {
				names = names[:len(names)-1] // recorded as the error it is
			}
			f.args, f.vals = args, names
			f.results = append(f.results, pedits...)
		}
	}
	v.funcs = append(v.funcs, f)
}

// where returns the file and line of p as Go's runtime and compiler give
// them: after a //line directive, the directive's file and line (the
// source a generator read); otherwise the file's base name.
func (v *visitor) where(p token.Pos) (string, int) {
	adj, raw := v.fset.PositionFor(p, true), v.fset.PositionFor(p, false)
	if adj.Filename != raw.Filename {
		return adj.Filename, adj.Line
	}
	return filepath.Base(raw.Filename), adj.Line
}

func (v *visitor) funcDecl(d *ast.FuncDecl) {
	name := v.pkg + "." + DeclName(d)
	if d.Name.Name == "init" && d.Recv == nil {
		// Go numbers a package's init functions, init.0, init.1, in the
		// order it compiles them, across its files: Options.Inits says
		// how many came before this file's.
		name = fmt.Sprintf("%s.init.%d", v.pkg, v.opts.Inits+v.inits)
		v.inits++
	}
	switch {
	case d.Body == nil:
		v.omit(name, d.Pos(), WhyNoBody, "")
		return
	case hasDirective(d.Doc, "//calltrail:ignore"):
		v.omit(name, d.Pos(), WhyIgnored, "")
		return
	}
	if hasDirective(d.Doc, "//go:nosplit") {
		v.omit(name, d.Pos(), WhyNosplit, "")
	} else {
		// The compiler places a function at the token after func: its
		// receiver's parenthesis, or its name.
		pos := d.Name.Pos()
		if d.Recv != nil {
			pos = d.Recv.Opening
		}
		v.add(name, d.Type, d.Body, d.Pos(), pos)
	}
	v.outer, v.lits = name, 0
	ast.Inspect(d.Body, v.lit)
}

// lit names and instruments function literals: Go calls the closures of
// F F.func1, F.func2, ..., and those inside F.func1 F.func1.1, F.func1.2.
func (v *visitor) lit(n ast.Node) bool {
	l, ok := n.(*ast.FuncLit)
	if !ok {
		return true
	}
	v.lits++
	sep := "."
	if v.nested == 0 {
		sep = ".func"
	}
	name := v.outer + sep + strconv.Itoa(v.lits)
	v.add(name, l.Type, l.Body, l.Pos(), l.Pos())
	outer, lits := v.outer, v.lits
	v.outer, v.lits = name, 0
	v.nested++
	ast.Inspect(l.Body, v.lit)
	v.nested--
	v.outer, v.lits = outer, lits
	return false
}

// DeclName is a function's name as Go's runtime gives it, without the
// package: F, F[...], T.M, (*T).M, (*T[...]).M.
func DeclName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		if d.Type.TypeParams != nil {
			return d.Name.Name + "[...]"
		}
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	ptr := false
	if s, ok := t.(*ast.StarExpr); ok {
		ptr, t = true, s.X
	}
	generic := false
	switch x := t.(type) {
	case *ast.IndexExpr:
		t, generic = x.X, true
	case *ast.IndexListExpr:
		t, generic = x.X, true
	case *ast.ParenExpr:
		t = x.X
	}
	recv := "?"
	if id, ok := t.(*ast.Ident); ok {
		recv = id.Name
	}
	if generic {
		recv += "[...]"
	}
	if ptr {
		return "(*" + recv + ")." + d.Name.Name
	}
	return recv + "." + d.Name.Name
}

// CoverageDecl is the declaration that registers c with the runtime when
// its package initialises: appended to one of the package's instrumented
// files, which import the runtime already.
func CoverageDecl(c tracefile.Coverage) string {
	return fmt.Sprintf("\nvar _ = %s.Coverage(%s)\n", importName, strconv.Quote(string(tracewrite.AppendCoverage(nil, c))))
}
