package instrument

import (
	"bytes"
	"go/format"
	"regexp"
	"strings"
	"testing"
)

const undoSrc = `package main

import (
	"fmt"
	"os"
)

type T struct{ n int }

func (t *T) inc() { t.n++ }

func main() {
	f := func(s string) int {
		return len(s)
	}
	fmt.Println(f("x"), os.Args)
}
`

// appended is a function a user adds to an instrumented file.
const appended = "\nfunc added() int { return 1 }\n"

// TestUndoAfterFormatting instruments a file, reformats it as tools do,
// and undoes: the guards, the import and the table are found and taken
// out wherever the formatter put them. What is left is the original but
// for layout (a one-line function the formatter spread over lines stays
// spread: calltrail instrument keeps the original to give back whole).
func TestUndoAfterFormatting(t *testing.T) {
	res, err := File("main.go", []byte(undoSrc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	gofmt := func(src []byte) []byte {
		out, err := format.Source(src)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// goimports moves the import into the block, sorted, in a group of
	// its own.
	goimports := func(src []byte) []byte {
		s := string(gofmt(src))
		s = strings.Replace(s, "\nimport __ct \"github.com/calltrail/calltrail\"\n", "", 1)
		s = strings.Replace(s, "\t\"os\"\n)", "\t\"os\"\n\n\t__ct \"github.com/calltrail/calltrail\"\n)", 1)
		return gofmt([]byte(s))
	}
	for name, reformat := range map[string]func([]byte) []byte{
		"as written": func(b []byte) []byte { return b },
		"gofmt":      gofmt,
		"goimports":  goimports,
		// An edit elsewhere in the file, then gofmt.
		"edited": func(b []byte) []byte {
			return gofmt(bytes.Replace(b, []byte(`fmt.Println(f("x"), os.Args)`), []byte(`fmt.Println(f("xy"), os.Args)`), 1))
		},
		// A function added at the end, after the table, unformatted:
		// the rest is as File wrote it, and comes back byte for byte.
		"appended": func(b []byte) []byte { return append(b, appended...) },
	} {
		instrumented := reformat(res.Src)
		if name != "as written" && bytes.Equal(instrumented, res.Src) {
			t.Fatalf("%s: the formatter changed nothing", name)
		}
		got, err := Undo(instrumented)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want := undoSrc
		if name == "edited" {
			want = strings.Replace(want, `f("x")`, `f("xy")`, 1)
		}
		if name == "appended" {
			want += appended
		}
		if (name == "as written" || name == "appended") && string(got) != want {
			t.Errorf("%s: undo gave\n%s\nwant\n%s", name, got, want)
		}
		if !SameSource(got, []byte(want)) {
			t.Errorf("%s: undo gave\n%s\nwant, but for layout,\n%s", name, got, want)
		}
	}
}

// TestUndoTrailingComment: a comment that ends the file stays the
// file's through gofmt: right before the table it would be the table's
// doc comment, which gofmt rewrites (an indented line after "//" becomes
// a code block), and the file would not come back.
func TestUndoTrailingComment(t *testing.T) {
	src := []byte("package p\n\nfunc A() int { return 1 }\n\n// Note:\n//     indented\n")
	res, err := File("p.go", src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	formatted, err := format.Source(res.Src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Undo(formatted)
	if err != nil {
		t.Fatal(err)
	}
	if !SameSource(got, src) {
		t.Errorf("undo after gofmt gave\n%s\nwant, but for layout,\n%s", got, src)
	}
}

// TestUndoRefuses leaves alone, with an error, instrumentation that was
// changed by hand.
func TestUndoRefuses(t *testing.T) {
	res, err := File("main.go", []byte(undoSrc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	formatted, _ := format.Source(res.Src)
	for name, src := range map[string][]byte{
		"guard edited": bytes.Replace(formatted, []byte("defer __ct.Exit(c)"), []byte("defer __ct.Exit(c)\n\t\t\tprintln()"), 1),
		"table gone":   formatted[:bytes.Index(formatted, []byte("var __ctf_"))],
		// The unformatted guard, its test changed.
		"condition edited": bytes.Replace(res.Src, []byte("c != 0"), []byte("c != 1"), 1),
		"condition turned": bytes.Replace(res.Src, []byte("c != 0"), []byte("c != c"), 1),
	} {
		if _, err := Undo(src); err == nil {
			t.Errorf("%s: Undo did not refuse", name)
		}
	}
}

// namesSrc has every shape of signature File names parameters and
// results in, for errors and values.
const namesSrc = `package p

import "errors"

type G[T any] struct{ v T }

func (g *G[T]) Get(int, string) (T, error) { return g.v, nil }
func (G[T]) Blank(_ int, _ ...string) (_ T, _ error) { return }
func lone() error { return errors.New("x") }
func loneInt(int) int { return 1 }
func loneFunc() func() (int, error) { return nil }
func loneIface() interface{ M() } { return nil }
func loneParen() (error) { return nil }
func named(a, b int) (n int, err error) { return a + b, nil }
func mixed(a int, _ bool) (int, string, error) {
	f := func(string) (bool, error) { return true, nil }
	_, _ = f("")
	return a, "", nil
}
func variadic(xs ...int) /* keep */ error /* me */ { return nil }
func none() {}
`

// TestUndoNames instruments with errors and values, which names
// parameters and results, and undoes: the names, and the parentheses put
// around lone results, are gone, formatted or not.
func TestUndoNames(t *testing.T) {
	res, err := File("p.go", []byte(namesSrc), Options{Errors: true, Args: regexp.MustCompile(".")})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"__cta0 int", "__cta0_ int", "__ctr0_ T", "__ctErr_ error", "(__ctpErr error)", "(__ctp0 func() (int, error))", "(__ctp0 interface{ M() })", "(__ctErr error)", "__ctr0 bool"} {
		if !bytes.Contains(res.Src, []byte(name)) {
			t.Errorf("instrumented source has no %q:\n%s", name, res.Src)
		}
	}
	formatted, err := format.Source(res.Src)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(formatted, res.Src) {
		t.Fatal("gofmt changed nothing")
	}
	got, err := Undo(res.Src)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != namesSrc {
		t.Errorf("undo gave\n%s\nwant\n%s", got, namesSrc)
	}
	got, err = Undo(formatted)
	if err != nil {
		t.Fatal(err)
	}
	if !SameSource(got, []byte(namesSrc)) {
		t.Errorf("undo after gofmt gave\n%s\nwant, but for layout,\n%s", got, namesSrc)
	}
	// Instrumenting what was instrumented starts from the original.
	again, err := File("p.go", res.Src, Options{Errors: true, Args: regexp.MustCompile(".")})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Src, res.Src) {
		t.Errorf("instrumenting twice gave\n%s\nwant\n%s", again.Src, res.Src)
	}
}

// FuzzUndo checks, on any source File accepts, that Undo gives back the
// original bytes of what File made, with errors and values recorded; and
// that Undo of anything returns an error rather than panicking.
func FuzzUndo(f *testing.F) {
	f.Add(namesSrc)
	f.Add(undoSrc)
	f.Add("package p\nfunc f(int) (x, _ int, err error) { return }\n")
	f.Add("package p\nvar g = func() error { return nil }")
	f.Fuzz(func(t *testing.T, src string) {
		Undo([]byte(src)) // must not panic
		if Instrumented([]byte(src)) {
			return // Undo's refusals are tested above
		}
		res, err := File("p.go", []byte(src), Options{Errors: true, Args: regexp.MustCompile(".")})
		if err != nil {
			return
		}
		got, err := Undo(res.Src)
		if err != nil {
			t.Fatalf("Undo: %v\n%s", err, res.Src)
		}
		if string(got) != src {
			t.Fatalf("Undo gave\n%s\nwant\n%s", got, src)
		}
	})
}

// TestCRLF: a file whose lines end in CRLF keeps them all while
// instrumented, the table's line too, and comes back byte for byte.
func TestCRLF(t *testing.T) {
	src := []byte(strings.ReplaceAll(undoSrc, "\n", "\r\n"))
	res, err := File("main.go", src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(res.Src, []byte("\n")); n != bytes.Count(res.Src, []byte("\r\n")) || n != bytes.Count(src, []byte("\n"))+2 {
		t.Errorf("instrumented, %d line ends, %d of them CRLF; want %d, all CRLF", n, bytes.Count(res.Src, []byte("\r\n")), bytes.Count(src, []byte("\n"))+2)
	}
	back, err := Undo(res.Src)
	if err != nil || !bytes.Equal(back, src) {
		t.Errorf("Undo: %v, %q", err, back)
	}
}

// TestGuardPattern: Undo's pattern recognizes every form of guard File
// writes, and only the whole guard.
func TestGuardPattern(t *testing.T) {
	for _, f := range []fn{
		{},
		{errName: "__ctErr"},
		{args: []string{"x", "__cta1"}},
		{vals: []string{"r"}},
		{args: []string{"ü"}, vals: []string{"__ctr0", "err"}, errName: "err"},
	} {
		g := guard("__ctf_0123abcd", 17, f)
		if loc := guardRE.FindStringIndex(g); loc == nil || loc[0] != 0 || loc[1] != len(g) {
			t.Errorf("%q: matched %v", g, loc)
		}
		if guardRE.MatchString(g[:len(g)-1]) {
			t.Errorf("%q without its last byte matches", g)
		}
	}
}

// ctypeSrc is C translated to Go, whose names hold the letters of
// calltrail's (__ctype_b_loc, __ctr): it is not instrumented.
const ctypeSrc = `package libc

// X__ctype_b_loc returns __ctype_b, as glibc's __ctype_b_loc does.
func X__ctype_b_loc(__ctrl int) int { return __ctype_b + __ctrl }

var __ctype_b = 1

func __ct_helper() {}
`

// TestNotOursByName: source whose own names hold calltrail's letters is
// not taken for instrumented; File instruments it, and Undo gives it
// back, byte for byte as File left it, and whole after gofmt.
func TestNotOursByName(t *testing.T) {
	if Instrumented([]byte(ctypeSrc)) {
		t.Errorf("Instrumented(ctypeSrc) = true")
	}
	if out, err := Undo([]byte(ctypeSrc)); err != nil || string(out) != ctypeSrc {
		t.Errorf("Undo(ctypeSrc) = %q, %v; want it unchanged", out, err)
	}
	res, err := File("ctype.go", []byte(ctypeSrc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Funcs) != 2 || !Instrumented(res.Src) {
		t.Fatalf("instrumented %d functions: %s", len(res.Funcs), res.Src)
	}
	formatted, err := format.Source(res.Src)
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string][]byte{"as File left it": res.Src, "formatted": formatted} {
		out, err := Undo(src)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if name == "formatted" {
			// gofmt opened the one-line bodies the guards went in.
			if Instrumented(out) || !bytes.Contains(out, []byte("return __ctype_b + __ctrl")) || !bytes.Contains(out, []byte("func __ct_helper() {")) {
				t.Errorf("%s: undone\n%s", name, out)
			}
		} else if string(out) != ctypeSrc {
			t.Errorf("%s: undone\n%s\nwant\n%s", name, out, ctypeSrc)
		}
	}
}
