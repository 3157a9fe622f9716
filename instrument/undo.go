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
	guardRE  = regexp.MustCompile(` if __ct\.Enabled \{ if c := __ct\.Enter\(&__ctf_[0-9a-f]{8}\[[0-9]+\]\); c != 0 \{ defer __ct\.Exit\(c\) \} \};`)
	importRE = regexp.MustCompile(`; import __ct "[^"\n]+"`)
	tableRE  = regexp.MustCompile(`\nvar __ctf_[0-9a-f]{8} = \[\.\.\.\]__ct\.Func\{[^\n]*\}\n?$`)
)

// Instrumented reports whether src holds calltrail's instrumentation, as
// File left it or reformatted since.
func Instrumented(src []byte) bool {
	return tableRE.Match(src) || bytes.Contains(src, []byte(importName+" "))
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
		return nil, errors.New("calltrail's instrumentation was edited by hand: cannot undo safely")
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "", out, parser.SkipObjectResolution); err != nil {
		return nil, fmt.Errorf("cannot undo: %v", err)
	}
	return out, nil
}

// isGuard reports whether s is the guard File inserts, however
// formatted: if __ct.Enabled { if c := __ct.Enter(&TABLE[i]); c != 0 {
// defer __ct.Exit(c) } }.
func isGuard(s ast.Stmt, table string) bool {
	outer, ok := s.(*ast.IfStmt)
	if !ok || outer.Init != nil || outer.Else != nil || !isSel(outer.Cond, "Enabled") || len(outer.Body.List) != 1 {
		return false
	}
	inner, ok := outer.Body.List[0].(*ast.IfStmt)
	if !ok || inner.Else != nil || len(inner.Body.List) != 1 {
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
	def, ok := inner.Body.List[0].(*ast.DeferStmt)
	return ok && isSel(def.Call.Fun, "Exit") && len(def.Call.Args) == 1 && isIdent(def.Call.Args[0], "c")
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
		lineStart := bytes.LastIndexByte(src[:from], '\n') + 1
		end := bytes.IndexByte(src[to:], '\n')
		if end < 0 {
			end = len(src) - to
		}
		if len(bytes.TrimSpace(src[lineStart:from])) == 0 && len(bytes.TrimSpace(src[to:to+end])) == 0 {
			from, to = lineStart, min(to+end+1, len(src))
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
