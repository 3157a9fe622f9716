package instrument

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/scanner"
	"go/token"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// The text File inserts, as File inserts it.
var (
	guardRE  = regexp.MustCompile(guardPattern())
	nameRE   = regexp.MustCompile(`^__ct(?:(?:a|r|p)[0-9]+|p?Err)_?$`)
	importRE = regexp.MustCompile(`; import __ct "[^"\n]+"`)
	// The import, as File writes it or a formatter moved it: the name
	// alone is in C translated to Go (__ctype_b_loc).
	importLineRE = regexp.MustCompile(`(?m)(?:^[ \t]*(?:import[ \t]+)?|; import )__ct[ \t]+"`)
	// The table, after the blank line before it (none before 2026-11-29).
	tableRE = regexp.MustCompile(`\n(?:\r?\n)?var __ctf_[0-9a-f]{8} = \[\.\.\.\]__ct\.Func\{[^\n]*\}(?:\r?\n)?$`)
)

// guardPattern is the regular expression of the guard's text, made of
// the parts guard writes.
func guardPattern() string {
	q := func(part string) string {
		return strings.NewReplacer(
			"TABLE", tablePref+`[0-9a-f]{8}`,
			"INDEX", `[0-9]+`,
			"ID", `[\p{L}_][\p{L}\p{Nd}_]*`,
			"EXIT", `(?:`+regexp.QuoteMeta(guardExit)+`|`+strings.Replace(regexp.QuoteMeta(guardExitErr), "ID", `[\p{L}_][\p{L}\p{Nd}_]*`, 1)+`)`,
		).Replace(regexp.QuoteMeta(part))
	}
	return q(guardOpen) + `(?:` + q(guardArg) + `)*(?:` + q(guardDefer) + `|` + q(guardDeferFunc) + `(?:` + q(guardResult) + `)*` + q(guardFuncEnd) + `)` + q(guardClose)
}

// Instrumented reports whether src holds calltrail's instrumentation, as
// File left it or reformatted since.
func Instrumented(src []byte) bool {
	return tableRE.Match(src) || importLineRE.Match(src)
}

// Undo removes the instrumentation File added to src. Where the inserted
// text is as File left it, the user's other edits aside, it gives back
// the original bytes. Where a formatter (gofmt, goimports, an editor's
// format on save) has moved it since, it finds the guards, the import and
// the function table in the syntax tree and takes them out, with the
// lines they came to occupy; the rest stays as the formatter left it.
// Anything else of calltrail's left in the file (a guard edited by hand,
// a table without its guards) makes it refuse, with src untouched.
// Source without instrumentation is returned unchanged.
func Undo(src []byte) ([]byte, error) {
	src, err := undoNames(src)
	if err != nil {
		return nil, err
	}
	if loc := tableRE.FindIndex(src); loc != nil {
		table := src[loc[0]:loc[1]]
		body := src[:loc[0]]
		if bytes.HasSuffix(table, []byte("\n")) {
			body = src[:loc[0]+1] // the original ended with that newline
		}
		body = guardRE.ReplaceAll(body, nil)
		body = importRE.ReplaceAll(body, nil)
		if !bytes.Contains(body, []byte(importName)) && !bytes.Contains(body, []byte(tablePref)) {
			return body, nil
		}
	}
	if !bytes.Contains(src, []byte(importName)) && !bytes.Contains(src, []byte(tablePref)) {
		return src, nil
	}
	return undoParsed(src)
}

// undoParsed is Undo for instrumentation a formatter has moved.
func undoParsed(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("cannot undo: %v", err)
	}
	var cut []ast.Node
	table := ""
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		var keep int
		for _, s := range g.Specs {
			switch s := s.(type) {
			case *ast.ImportSpec:
				if s.Name != nil && s.Name.Name == importName {
					cut = append(cut, s)
					continue
				}
			case *ast.ValueSpec:
				if len(s.Names) == 1 && strings.HasPrefix(s.Names[0].Name, tablePref) && g.Tok == token.VAR {
					table = s.Names[0].Name
					cut = append(cut, s)
					continue
				}
			}
			keep++
		}
		if keep == 0 && len(g.Specs) > 0 {
			// Nothing of the user's in the declaration: it goes whole.
			cut = cut[:len(cut)-len(g.Specs)]
			cut = append(cut, g)
		}
	}
	if table == "" {
		if !ours(f) {
			return src, nil // the names are the user's: __ctype_b_loc
		}
		return nil, errors.New("instrumented by calltrail, but its function table is gone: cannot undo safely")
	}
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		switch n := n.(type) {
		case *ast.FuncDecl:
			body = n.Body
		case *ast.FuncLit:
			body = n.Body
		}
		if body != nil && len(body.List) > 0 && isGuard(body.List[0], table) {
			cut = append(cut, body.List[0])
		}
		return true
	})
	out := cutLines(fset, src, cut)
	if fmted, err := format.Source(src); err == nil && bytes.Equal(fmted, src) {
		// The file was formatted: so is what is left of it, which closes
		// the gaps the cuts left.
		if out, err = format.Source(out); err != nil {
			return nil, fmt.Errorf("cannot undo: %v", err)
		}
	}
	if bytes.Contains(out, []byte(importName)) || bytes.Contains(out, []byte(tablePref)) {
		if left, err := parser.ParseFile(token.NewFileSet(), "", out, parser.SkipObjectResolution); err != nil || ours(left) {
			return nil, errors.New("calltrail's instrumentation was edited by hand: cannot undo safely")
		}
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "", out, parser.SkipObjectResolution); err != nil {
		return nil, fmt.Errorf("cannot undo: %v", err)
	}
	return out, nil
}

// undoNames takes out the names File gave parameters and results (see
// errResultName), with the parentheses it put around a lone result.
func undoNames(src []byte) ([]byte, error) {
	if !bytes.Contains(src, []byte("__cta")) && !bytes.Contains(src, []byte("__ctr")) && !bytes.Contains(src, []byte("__ctp")) && !bytes.Contains(src, []byte(errResultName)) {
		return src, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("cannot undo: %v", err)
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	var edits []edit
	fields := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, fd := range fl.List {
			for _, n := range fd.Names {
				switch {
				case !nameRE.MatchString(n.Name):
				case strings.HasSuffix(n.Name, blankSuffix):
					edits = append(edits, edit{at: off(n.Pos()), del: len(n.Name), text: "_"})
				case strings.HasPrefix(n.Name, "__ctp") && len(fl.List) == 1 && len(fd.Names) == 1 && fl.Opening.IsValid():
					edits = append(edits,
						edit{at: off(fl.Opening), del: off(fd.Type.Pos()) - off(fl.Opening)},
						edit{at: off(fd.Type.End()), del: off(fl.Closing) + 1 - off(fd.Type.End())})
				case len(fd.Names) == 1:
					edits = append(edits, edit{at: off(n.Pos()), del: off(fd.Type.Pos()) - off(n.Pos())})
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if ft, ok := n.(*ast.FuncType); ok {
			fields(ft.Params)
			fields(ft.Results)
		}
		return true
	})
	var out bytes.Buffer
	apply(&out, src, edits)
	return out.Bytes(), nil
}

// ours reports whether f holds a name of calltrail's instrumentation: the
// runtime's import, a use of it, or a function table. Source may hold the
// same letters as part of its own names (__ctype_b_loc).
func ours(f *ast.File) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec:
			found = found || n.Name != nil && n.Name.Name == importName
		case *ast.Ident:
			found = found || n.Name == importName || strings.HasPrefix(n.Name, tablePref)
		}
		return !found
	})
	return found
}

// isGuard reports whether s is the guard File inserts, however
// formatted: if __ct.Enabled { if c := __ct.Enter(&TABLE[i]); c != 0 {
// defer __ct.Exit(c) } }, or with the error's name, ExitErr(c, &e); and,
// with values, __ct.Arg(c, x) before the defer, which then runs
// func() { __ct.Result(c, r); EXIT }().
func isGuard(s ast.Stmt, table string) bool {
	outer, ok := s.(*ast.IfStmt)
	if !ok || outer.Init != nil || outer.Else != nil || !isSel(outer.Cond, "Enabled") || len(outer.Body.List) != 1 {
		return false
	}
	inner, ok := outer.Body.List[0].(*ast.IfStmt)
	if !ok || inner.Else != nil || len(inner.Body.List) == 0 {
		return false
	}
	init, ok := inner.Init.(*ast.AssignStmt)
	if !ok || init.Tok != token.DEFINE || len(init.Lhs) != 1 || len(init.Rhs) != 1 || !isIdent(init.Lhs[0], "c") {
		return false
	}
	enter, ok := init.Rhs[0].(*ast.CallExpr)
	if !ok || !isSel(enter.Fun, "Enter") || len(enter.Args) != 1 {
		return false
	}
	addr, ok := enter.Args[0].(*ast.UnaryExpr)
	if !ok || addr.Op != token.AND {
		return false
	}
	idx, ok := addr.X.(*ast.IndexExpr)
	if !ok || !isIdent(idx.X, table) {
		return false
	}
	cond, ok := inner.Cond.(*ast.BinaryExpr)
	if !ok || cond.Op != token.NEQ || !isIdent(cond.X, "c") {
		return false
	}
	if zero, ok := cond.Y.(*ast.BasicLit); !ok || zero.Kind != token.INT || zero.Value != "0" {
		return false
	}
	list := inner.Body.List
	for ; len(list) > 1 && isRecord(list[0], "Arg"); list = list[1:] {
	}
	def, ok := list[0].(*ast.DeferStmt)
	if !ok || len(list) != 1 {
		return false
	}
	if isExit(def.Call) {
		return true
	}
	lit, ok := def.Call.Fun.(*ast.FuncLit)
	if !ok || len(def.Call.Args) != 0 || len(lit.Type.Params.List) != 0 || lit.Type.Results != nil || len(lit.Body.List) == 0 {
		return false
	}
	body := lit.Body.List
	for ; len(body) > 1 && isRecord(body[0], "Result"); body = body[1:] {
	}
	last, ok := body[0].(*ast.ExprStmt)
	if !ok || len(body) != 1 {
		return false
	}
	call, ok := last.X.(*ast.CallExpr)
	return ok && isExit(call)
}

// isExit reports whether call is __ct.Exit(c) or __ct.ExitErr(c, &name).
func isExit(call *ast.CallExpr) bool {
	if len(call.Args) == 0 || !isIdent(call.Args[0], "c") {
		return false
	}
	if isSel(call.Fun, "Exit") {
		return len(call.Args) == 1
	}
	if !isSel(call.Fun, "ExitErr") || len(call.Args) != 2 {
		return false
	}
	addr, ok := call.Args[1].(*ast.UnaryExpr)
	if !ok || addr.Op != token.AND {
		return false
	}
	_, ok = addr.X.(*ast.Ident)
	return ok
}

// isRecord reports whether s is __ct.FN(c, name), FN Arg or Result.
func isRecord(s ast.Stmt, fn string) bool {
	e, ok := s.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := e.X.(*ast.CallExpr)
	if !ok || !isSel(call.Fun, fn) || len(call.Args) != 2 || !isIdent(call.Args[0], "c") {
		return false
	}
	_, ok = call.Args[1].(*ast.Ident)
	return ok
}

func isSel(e ast.Expr, name string) bool {
	s, ok := e.(*ast.SelectorExpr)
	return ok && isIdent(s.X, importName) && s.Sel.Name == name
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// cutLines removes the nodes from src. A node alone on its lines takes
// the lines with it; one sharing a line with other code leaves the rest.
func cutLines(fset *token.FileSet, src []byte, nodes []ast.Node) []byte {
	type span struct{ from, to int }
	spans := make([]span, 0, len(nodes))
	for _, n := range nodes {
		from, to := fset.Position(n.Pos()).Offset, fset.Position(n.End()).Offset
		// A statement's semicolon, written by hand, goes with it.
		for to < len(src) && (src[to] == ' ' || src[to] == '\t') {
			to++
		}
		if to < len(src) && src[to] == ';' {
			to++
		}
		// So does the space before it on its line, after a brace (a
		// guard as File wrote it) or a semicolon, which goes too (the
		// import after the package clause).
		f := from
		for f > 0 && (src[f-1] == ' ' || src[f-1] == '\t') {
			f--
		}
		switch {
		case f > 0 && src[f-1] == '{':
			from = f
		case f > 0 && src[f-1] == ';':
			from = f - 1
		}
		lineStart := bytes.LastIndexByte(src[:from], '\n') + 1
		end := bytes.IndexByte(src[to:], '\n')
		if end < 0 {
			end = len(src) - to
		}
		if len(bytes.TrimSpace(src[lineStart:from])) == 0 && len(bytes.TrimSpace(src[to:to+end])) == 0 {
			from, to = lineStart, min(to+end+1, len(src))
			// A declaration of calltrail's (the table) goes with the
			// blank line File put before it.
			if _, ok := n.(*ast.GenDecl); ok && from > 0 {
				prev := bytes.LastIndexByte(src[:from-1], '\n') + 1
				if len(bytes.TrimSpace(src[prev:from])) == 0 {
					from = prev
				}
			}
		}
		spans = append(spans, span{from, to})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	var out bytes.Buffer
	last := 0
	for _, s := range spans {
		if s.from < last {
			s.from = last // nested in a span already cut
		}
		if s.to > s.from {
			out.Write(src[last:s.from])
			last = s.to
		}
	}
	out.Write(src[last:])
	return out.Bytes()
}

// SameSource reports whether two Go sources differ in layout only: the
// same tokens and comments, whatever the spaces, line breaks and
// semicolons between them.
func SameSource(a, b []byte) bool {
	ta, tb := tokens(a), tokens(b)
	return ta != nil && tb != nil && slices.Equal(ta, tb)
}

type tok struct {
	t   token.Token
	lit string
}

// tokens scans src, leaving out semicolons; nil if src does not scan.
func tokens(src []byte) []tok {
	fset := token.NewFileSet()
	var s scanner.Scanner
	bad := false
	s.Init(fset.AddFile("", -1, len(src)), src, func(token.Position, string) { bad = true }, scanner.ScanComments)
	var out []tok
	for {
		_, t, lit := s.Scan()
		if t == token.EOF {
			break
		}
		if t != token.SEMICOLON {
			out = append(out, tok{t, lit})
		}
	}
	if bad {
		return nil
	}
	return out
}
