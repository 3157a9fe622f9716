//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/internal/clitest"
	"github.com/calltrail/calltrail/query"
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
	chdir(t, dir)
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

// TestChainsErrors runs examples/failing, whose main.D fails through two
// of its three chains, and checks that chains --errors main.D gives
// exactly the failed calls of each chain with their messages, and that
// report, diff and chains without --errors count them.
func TestChainsErrors(t *testing.T) {
	bin := clitest.Binary(t)
	dir := t.TempDir()
	trace, plain := filepath.Join(dir, "errors.trace"), filepath.Join(dir, "plain.trace")
	for _, args := range [][]string{{"-o", trace}, {"-o", plain, "--errors=false"}} {
		run := exec.Command(bin, append(append([]string{"run"}, args...), "../../examples/failing")...)
		if out, err := run.CombinedOutput(); err != nil {
			t.Fatalf("calltrail run: %v\n%s", err, out)
		}
	}
	chains := func(args ...string) map[string]query.Chain {
		code, stdout, stderr := runCmd(append(append([]string{"chains", "--json"}, args...), "main.D", trace)...)
		if code != 0 {
			t.Fatalf("chains: exit %d: %s", code, stderr)
		}
		var res struct{ Chains []query.Chain }
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		out := map[string]query.Chain{}
		for _, c := range res.Chains {
			out[query.Text(c.Path, " -> ")] = c
		}
		return out
	}
	const (
		serve     = "main.serve.func1 -> main.handle -> main.D"
		overrides = "main.main -> main.loadOverrides -> main.D"
		defaults  = "main.main -> main.loadDefaults -> main.D"
	)
	failed := chains("--errors")
	if len(failed) != 2 {
		t.Errorf("chains --errors gives %d chains, want 2 (serve and overrides): %v", len(failed), failed)
	}
	messages := func(c query.Chain) string {
		var ms []string
		for _, m := range c.Messages {
			ms = append(ms, fmt.Sprintf("%d %s %s", m.Calls, m.Type, m.Message[strings.LastIndex(m.Message, "/")+1:]))
		}
		return strings.Join(ms, "; ")
	}
	if c := failed[serve]; c.Calls != 10 || c.Errors != 10 || messages(c) != `10 *fmt.wrapError setting limit: strconv.Atoi: parsing "ten": invalid syntax` {
		t.Errorf("serve chain: %d calls, %d errors, messages %s", c.Calls, c.Errors, messages(c))
	}
	if c := failed[overrides]; c.Calls != 2 || c.Errors != 2 ||
		messages(c) != "1 *fs.PathError queue.local: no such file or directory; 1 *fs.PathError workers.local: no such file or directory" {
		t.Errorf("overrides chain: %d calls, %d errors, messages %s", c.Calls, c.Errors, messages(c))
	}
	for _, c := range failed {
		for _, in := range c.Slowest {
			if in.Error == nil {
				t.Errorf("chains --errors lists a call that returned nil: %+v", in)
			}
		}
	}
	all := chains()
	if c := all[serve]; c.Calls != 100 || c.Errors != 10 {
		t.Errorf("serve chain: %d calls, %d errors, want 100 and 10", c.Calls, c.Errors)
	}
	if c := all[defaults]; c.Calls != 2 || c.Errors != 0 || c.Messages != nil {
		t.Errorf("defaults chain: %d calls, %d errors, %v", c.Calls, c.Errors, c.Messages)
	}

	code, stdout, _ := runCmd("chains", "--errors", "main.D", trace)
	if code != 0 || !strings.Contains(stdout, "10 calls, total ") || !strings.Contains(stdout, `    10× *fmt.wrapError "setting limit: strconv.Atoi: parsing \"ten\": invalid syntax"`) {
		t.Errorf("chains --errors: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = runCmd("report", "--sort", "errors", "--top", "1", trace)
	if code != 0 || !regexp.MustCompile(`errors  function\n.* 12  main\.D\n`).MatchString(stdout) {
		t.Errorf("report --sort errors: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = runCmd("diff", plain, trace)
	if code != 0 || !regexp.MustCompile(`0/104 0\.0%  12/104 11\.5%  \+11\.5 pts  main\.D\n`).MatchString(stdout) {
		t.Errorf("diff: exit %d\n%s", code, stdout)
	}
}

// valueCases is a program whose functions take and return values of
// each kind, with parameters and results unnamed, named _, variadic,
// generic, of methods.
var valueCases = map[string]string{
	"go.mod": "module example.com/vals\n\ngo 1.22\n",
	"main.go": `package main

import (
	"fmt"
	"os"
	"time"
)

type P struct{ x, y float64 }

func (p *P) Move(dx, dy float64) (float64, float64) { p.x += dx; p.y += dy; return p.x, p.y }

func Sum(xs ...int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

func Blank(_ int, s string) (_ string, err error) { return s + "!", nil }

func Unnamed(int, string) (int, bool) { return 7, true }

func Max[T int | float64](a, b T) T {
	if a > b {
		return a
	}
	return b
}

func Kind(v any, d time.Duration, m map[string]int, f *os.File) string { return fmt.Sprintf("%T", v) }

func main() {
	p := &P{}
	x, y := p.Move(1.5, -2)
	s, _ := Blank(1, "hi")
	n, ok := Unnamed(3, "x")
	fmt.Println(x, y, Sum(1, 2, 3), s, n, ok, Max(2, 5), Max(2.5, 1), Kind(p, time.Millisecond, map[string]int{"a": 1}, nil))
}
`,
}

// TestValuesLostSaid: under CALLTRAIL_FULL=drop, with rings too small,
// the values of calls kept can be left out too; info and every verb
// say how many, where the calls alone were said before.
func TestValuesLostSaid(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod": "module example.com/lv\n\ngo 1.22\n",
		"main.go": `package main

import (
	"fmt"
	"strings"
	"sync"
)

var long = strings.Repeat("x", 32)

//go:noinline
func work(i int, s string) int { return i + len(s) }

func main() {
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200000; i++ {
				work(i, long)
			}
		}()
	}
	wg.Wait()
	fmt.Println("done")
}
`,
	})
	chdir(t, dir)
	t.Setenv("CALLTRAIL_FULL", "drop")
	t.Setenv("CALLTRAIL_BUFFER", "64KiB")
	if code, _, stderr := runCmd("run", "--args", `main\.work`, "-o", "lv.out", "."); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	s := readSummary(t, "lv.out")
	if s.Stats.LostErrors == 0 {
		t.Skip("no value lost in this run: the writer kept up")
	}
	want := fmt.Sprintf("%d errors, arguments or results of recorded calls", s.Stats.LostErrors)
	if code, stdout, _ := runCmd("info", "lv.out"); code != 0 || !strings.Contains(stdout, "lost        "+want) {
		t.Errorf("info: exit %d, no line %q:\n%s", code, want, stdout)
	}
	if _, _, stderr := runCmd("report", "lv.out"); !strings.Contains(stderr, want+" were left out") {
		t.Errorf("report does not warn %q:\n%s", want, stderr)
	}
}

// TestArgs checks that --args records the values of each kind, changes
// nothing the program prints, and that replay shows them.
func TestArgs(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, valueCases)
	chdir(t, dir)
	plain, err := exec.Command("go", "run", ".").Output()
	if err != nil {
		t.Fatalf("go run: %v", err)
	}
	code, stdout, stderr := runCmd("run", "--args", `^main\.`, "--inlined", "-o", "vals.trace", ".")
	if code != 0 || stdout != string(plain) {
		t.Fatalf("calltrail run: exit %d, printed %q, want %q\n%s", code, stdout, plain, stderr)
	}
	code, stdout, stderr = runCmd("replay", "vals.trace")
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"->main.(*P).Move(1.5, -2)\n", "<-main.(*P).Move ", " = 1.5, -2\n",
		"->main.Sum(len=3)\n", " = 6\n",
		`->main.Blank(1, "hi")`, ` = "hi!"` + "\n",
		`->main.Unnamed(3, "x")`, " = 7, true\n",
		"->main.Max[...](2, 5)\n", " = 5\n", "->main.Max[...](2.5, 1)\n",
		"->main.Kind(*main.P, 1000000, len=1, nil)\n", ` = "*main.P"` + "\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("replay lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("replay:\n%s", stdout)
	}

	// The same with the files rewritten, run by the go command, formatted
	// by gofmt, and given back byte for byte by --undo.
	code, _, stderr = runCmd("instrument", "-w", "--args", `^main\.`, "--inlined", ".")
	if code != 0 {
		t.Fatalf("instrument -w --args: exit %d, %s", code, stderr)
	}
	_, advice, ok := strings.Cut(stderr, "\tgo mod edit ")
	if !ok {
		t.Fatalf("instrument -w gave no advice on go.mod: %s", stderr)
	}
	advice, _, _ = strings.Cut(advice, "\n")
	if out, err := exec.Command("go", append([]string{"mod", "edit"}, strings.Fields(advice)...)...).CombinedOutput(); err != nil {
		t.Fatalf("go mod edit %s: %v\n%s", advice, err, out)
	}
	var said bytes.Buffer
	for _, tags := range []string{"", "calltrail"} {
		cmd := exec.Command("go", "run", "-tags="+tags, ".")
		cmd.Stderr = &said
		got, err := cmd.Output()
		if err != nil || string(got) != string(plain) {
			t.Fatalf("go run -tags=%s of the instrumented files: %v, printed %q, want %q\n%s", tags, err, got, plain, &said)
		}
	}
	if code, stdout, stderr = runCmd("replay", "calltrail.out"); code != 0 || !strings.Contains(stdout, "->main.Kind(*main.P, 1000000, len=1, nil)\n") || !strings.Contains(stdout, " = 7, true\n") {
		t.Errorf("replay of the instrumented files' trace: exit %d, %s\n%s\nthe program said: %s", code, stderr, stdout, &said)
	}
	if out, err := exec.Command("gofmt", "-w", ".").CombinedOutput(); err != nil {
		t.Fatalf("gofmt: %v\n%s", err, out)
	}
	if code, _, stderr = runCmd("instrument", "--undo", "-w", "."); code != 0 {
		t.Fatalf("instrument --undo -w: exit %d, %s", code, stderr)
	}
	for name, want := range valueCases {
		if got, _ := os.ReadFile(name); string(got) != want && name != "go.mod" {
			t.Errorf("%s after --undo:\n%s\nwant\n%s", name, got, want)
		}
	}
}
