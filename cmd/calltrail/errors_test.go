//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// errorCases are functions with an error result in the forms whose
// rewriting could change a program: unnamed results, a single result
// without parentheses, named results shadowed inside, bare returns, a
// deferred closure that sets the error after a panic, results named _,
// generics, methods of generic types, function literals. Their test
// checks what each returns; it must pass alike under go test and
// calltrail test.
var errorCases = map[string]string{
	"go.mod": "module example.com/errs\n\ngo 1.22\n",
	"errs.go": `package errs

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
)

var ErrOdd = errors.New("odd")

func Unnamed(n int) (int, error) {
	if n%2 == 1 {
		return 0, ErrOdd
	}
	return n / 2, nil
}

func Single(name string) error {
	if name == "" {
		return &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return nil
}

func Parenthesized(n int) (error) {
	if n < 0 {
		return fmt.Errorf("negative: %d", n)
	}
	return nil
}

func Shadowed(s string) (n int, err error) {
	if s == "" {
		err := errors.New("inner, not returned")
		_ = err
		return 0, nil
	}
	n, err = strconv.Atoi(s)
	return
}

func Recovered(fail bool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("recovered: %v", p)
		}
	}()
	if fail {
		panic("boom")
	}
	return nil
}

func Blank(n int) (_ int, _ error) {
	if n == 0 {
		return 0, ErrOdd
	}
	return n, nil
}

func Generic[T comparable](a, b T) (T, error) {
	if a != b {
		return a, fmt.Errorf("%v != %v", a, b)
	}
	return a, nil
}

type Box[T any] struct{ v T }

func (b *Box[T]) Get(ok bool) (T, error) {
	var zero T
	if !ok {
		return zero, ErrOdd
	}
	return b.v, nil
}

func Literal(n int) error {
	f := func() error {
		if n > 2 {
			return ErrOdd
		}
		return nil
	}
	return f()
}
`,
	"errs_test.go": `package errs

import (
	"errors"
	"io/fs"
	"testing"
)

func TestCases(t *testing.T) {
	if n, err := Unnamed(4); n != 2 || err != nil {
		t.Error("Unnamed(4)", n, err)
	}
	if _, err := Unnamed(3); err != ErrOdd {
		t.Error("Unnamed(3)", err)
	}
	if err := Single(""); !errors.Is(err, fs.ErrNotExist) || Single("x") != nil {
		t.Error("Single", err)
	}
	if Parenthesized(-1) == nil || Parenthesized(1) != nil {
		t.Error("Parenthesized")
	}
	if n, err := Shadowed(""); n != 0 || err != nil {
		t.Error("Shadowed empty", n, err)
	}
	if n, err := Shadowed("12"); n != 12 || err != nil {
		t.Error("Shadowed 12", n, err)
	}
	if _, err := Shadowed("x"); err == nil {
		t.Error("Shadowed x")
	}
	if err := Recovered(true); err == nil || err.Error() != "recovered: boom" {
		t.Error("Recovered(true)", err)
	}
	if Recovered(false) != nil {
		t.Error("Recovered(false)")
	}
	if n, err := Blank(0); n != 0 || err != ErrOdd {
		t.Error("Blank(0)", n, err)
	}
	if n, err := Blank(5); n != 5 || err != nil {
		t.Error("Blank(5)", n, err)
	}
	if _, err := Generic(1, 2); err == nil || err.Error() != "1 != 2" {
		t.Error("Generic", err)
	}
	if s, err := Generic("a", "a"); s != "a" || err != nil {
		t.Error("Generic a", s, err)
	}
	b := &Box[string]{v: "v"}
	if v, err := b.Get(true); v != "v" || err != nil {
		t.Error("Get", v, err)
	}
	if _, err := b.Get(false); err != ErrOdd {
		t.Error("Get false", err)
	}
	if Literal(3) != ErrOdd || Literal(1) != nil {
		t.Error("Literal")
	}
}
`,
}

// TestErrorResults checks that capturing error results changes nothing
// the cases can see, under calltrail test as under go test, and that the
// trace has each call's error.
func TestErrorResults(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, errorCases)
	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	if out, err := exec.Command("go", "test", "-count=1", ".").CombinedOutput(); err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	// --inlined: the small cases are functions the compiler inlines,
	// which are otherwise left alone.
	code, stdout, stderr := runCmd("test", "--errors", "--inlined", "-o", "traces", "-count=1", ".")
	if code != 0 || !strings.Contains(stdout, "ok  \texample.com/errs") {
		t.Fatalf("calltrail test: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCmd("replay", filepath.Join("traces", "errs.test.trace"))
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		`<-example.com/errs.Unnamed `, ` err=*errors.errorString "odd"`,
		`<-example.com/errs.Single `, ` err=*fs.PathError "open : file does not exist"`,
		`err=*errors.errorString "negative: -1"`, `err=*errors.errorString "recovered: boom"`,
		`<-example.com/errs.Blank `, `err=*errors.errorString "1 != 2"`, `<-example.com/errs.(*Box[...]).Get `,
		`err=*strconv.NumError "strconv.Atoi: parsing \"x\": invalid syntax"`,
		`<-example.com/errs.Literal.func1 `,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("replay lacks %s", want)
		}
	}
	if strings.Contains(stdout, "inner, not returned") {
		t.Error("replay shows an error the call did not return")
	}
	if t.Failed() {
		t.Logf("replay:\n%s", stdout)
	}
}
