//go:build calltrail

package calltrail

import (
	"errors"
	"io/fs"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/calltrail/calltrail/internal/gstate"
)

// fails is a traced function with an error result, guarded as the
// instrumenter guards it.
func fails(n int) (_ int, ctErr error) {
	if Enabled {
		if c := Enter(&funcs[9]); c != 0 {
			defer ExitErr(c, &ctErr)
		}
	}
	switch n {
	case 0:
		return 0, nil
	case 1:
		return 0, fs.ErrNotExist
	case 2:
		return 0, &fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist}
	case 3:
		var p *panicky
		return 0, p // not nil: a nil pointer in an interface
	case 4:
		return 0, errors.New(strings.Repeat("é", 150))
	case 5:
		return 0, traced{}
	case 6:
		return 0, spanEnder{}
	}
	return n, nil
}

type panicky struct{ s string }

func (p *panicky) Error() string { return p.s }

// traced is an error whose Error method is traced code.
type traced struct{}

func (traced) Error() string {
	var s string
	call(&funcs[10], func() { s = "traced failure" })
	return s
}

// spanEnder is an error whose Error method ends the span its goroutine
// started, which takes slots in a ring as calls do, and then runs traced
// code: those calls are not recorded either.
type spanEnder struct{}

func (spanEnder) Error() string {
	SpanEnd(enderSpan)
	return traced{}.Error()
}

var enderSpan = [8]byte{6}

// TestErrorsRecorded checks that each call of a function with an error
// result carries the error it returned: none, a sentinel, a pointer type
// with its message, an error whose Error method panics, a long message,
// an error whose Error method is traced: calltrail calls it, the program
// does not, so its calls are not recorded, even after it ends a span.
func TestErrorsRecorded(t *testing.T) {
	got := record(t, options{}, func() {
		SpanStart([16]byte{1}, enderSpan, [8]byte{}, false, 1, "ender")
		for n := range 7 {
			fails(n)
		}
		_ = traced{}.Error() // the program's own call is
	})
	calls := allCalls(got)
	for _, want := range []string{
		`->test.fails <-test.fails ->test.fails`,
		`<-test.fails err=*errors.errorString "file does not exist"`,
		`<-test.fails err=*fs.PathError "open x: file does not exist"`,
		`<-test.fails err=*calltrail.panicky "(its Error method panicked)"`,
		`<-test.fails err=calltrail.traced "traced failure"`,
		`<-test.fails err=calltrail.spanEnder "traced failure"`,
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("calls lack %s:\n%s", want, calls)
		}
	}
	if n := strings.Count(calls, "->test.(*traced).Error"); n != 1 {
		t.Errorf("the traced Error method is recorded %d times, want once, by the program's own call:\n%s", n, calls)
	}
	long := strings.Repeat("é", 98) + "…" // 199 bytes: a 200th would split an é
	if !strings.Contains(calls, `err=*errors.errorString "`+long+`"`) || len(long) > MaxErrorMessage {
		t.Errorf("a long message is not cut to %d bytes at a character:\n%s", MaxErrorMessage, calls)
	}
}

// TestErrorsNilFree checks that a call returning nil allocates nothing.
func TestErrorsNilFree(t *testing.T) {
	skipFallback(t)
	defer useTracer(t, t.TempDir()+"/t.out", options{})()
	funcs[9].id.Store(0)
	if n := testing.AllocsPerRun(1000, func() { fails(0) }); n != 0 {
		t.Errorf("a traced call returning nil allocates %v times", n)
	}
}

// TestErrorsKnownFree checks that a call returning an error the table
// already holds, whose message is a constant, allocates nothing.
func TestErrorsKnownFree(t *testing.T) {
	skipFallback(t)
	defer useTracer(t, t.TempDir()+"/t.out", options{})()
	funcs[9].id.Store(0)
	fails(1)
	if n := testing.AllocsPerRun(1000, func() { fails(1) }); n != 0 {
		t.Errorf("a traced call returning a known error allocates %v times", n)
	}
}

// skipFallback skips an allocation test where the runtime's g cannot be
// read: the fallback path allocates (see TestZeroAllocs).
func skipFallback(t *testing.T) {
	if !gstate.Fast() {
		t.Skip("the fallback path (no access to the runtime's g) asks runtime.Stack and runtime.Callers, which allocate")
	}
}

// TestErrorsBounded checks that a program returning endless distinct
// errors keeps a bounded table.
func TestErrorsBounded(t *testing.T) {
	var e errorTable
	e.init()
	for i := range maxErrors + 100 {
		e.id(uint64(i%7+1), &fs.PathError{Op: "open", Path: strconv.Itoa(i), Err: fs.ErrNotExist})
	}
	if n := len(e.all()); n > maxErrors {
		t.Errorf("%d distinct errors kept, want at most %d", n, maxErrors)
	}
	if last := e.all()[len(e.all())-1]; last != overflow {
		t.Errorf("the table's last entry is %+v, want the overflow note", last)
	}
}

// wrapping is an error that wraps another, and counts the calls of its
// Error method.
type wrapping struct{ inner error }

var errorCalls int

func (w *wrapping) Error() string { errorCalls++; return "level: " + w.inner.Error() }
func (w *wrapping) Unwrap() error { return w.inner }

// wraps fails at depth n, and each call on the way out wraps the error
// in another, or returns it as it is.
func wraps(n int, wrap bool) (ctErr error) {
	if Enabled {
		if c := Enter(&funcs[11]); c != 0 {
			defer ExitErr(c, &ctErr)
		}
	}
	if n == 0 {
		return fs.ErrNotExist
	}
	err := wraps(n-1, wrap)
	if wrap {
		return &wrapping{err}
	}
	return err
}

// TestErrorsWrapped checks that recording errors takes time linear in
// the depth of the calls: an error returned on up the stack has its
// message read once, and one wrapped again at each level has it read
// for maxWraps levels, then is recorded with the first message.
func TestErrorsWrapped(t *testing.T) {
	depth := 5000
	if !gstate.Fast() {
		// The fallback's goroutine ids come from runtime.Stack, which
		// walks the whole stack: a call costs its depth, and 5,000
		// levels took 58 s under qemu.
		depth = 1000
	}
	errorCalls = 0
	got := record(t, options{}, func() {
		wraps(depth, false)
		wraps(depth, true)
	})
	// Each message read costs its depth in calls of Error: 1+2+…+16,
	// not 1+2+…+5000.
	if max := (maxWraps + 1) * (maxWraps + 2) / 2; errorCalls > max {
		t.Errorf("Error methods called %d times, want at most %d", errorCalls, max)
	}
	calls := allCalls(got)
	for _, want := range []string{
		`err=*errors.errorString "file does not exist"`,
		`err=*calltrail.wrapping "level: file does not exist"`,
		`err=*calltrail.wrapping "` + strings.Repeat("level: ", maxWraps) + `file does not exist"`,
		`err=*calltrail.wrapping "…: file does not exist"`,
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("calls lack %s", want)
		}
	}
	if n, want := strings.Count(calls, " err="), 2*(depth+1); n != want {
		t.Errorf("%d calls carry an error, want %d", n, want)
	}
}

// sized is an error type per type argument.
type sized[T any] struct{}

func (sized[T]) Error() string { return "sized" }

// TestErrorTypeNames checks the names of errors' types that the error
// table keeps: more types than it keeps names of, twice over, each named
// as reflect names it.
func TestErrorTypeNames(t *testing.T) {
	errs := []error{
		sized[[0]byte]{}, sized[[1]byte]{}, sized[[2]byte]{}, sized[[3]byte]{},
		sized[[4]byte]{}, sized[[5]byte]{}, sized[[6]byte]{}, sized[[7]byte]{},
		sized[[8]byte]{}, sized[[9]byte]{}, sized[[10]byte]{},
		sized[[11]byte]{}, sized[[12]byte]{}, sized[[13]byte]{},
		sized[[14]byte]{}, sized[[15]byte]{}, sized[[16]byte]{},
		sized[[17]byte]{}, sized[[18]byte]{}, sized[[19]byte]{},
		sized[[20]byte]{}, sized[[21]byte]{}, sized[[22]byte]{},
		sized[[23]byte]{}, sized[[24]byte]{}, sized[[25]byte]{},
		sized[[26]byte]{}, sized[[27]byte]{}, sized[[28]byte]{},
		sized[[29]byte]{}, sized[[30]byte]{}, sized[[31]byte]{},
		sized[[32]byte]{}, sized[[33]byte]{}, sized[[34]byte]{},
		sized[[35]byte]{}, sized[[36]byte]{}, sized[[37]byte]{},
		sized[[38]byte]{}, sized[[39]byte]{}, sized[[40]byte]{},
		sized[[41]byte]{}, sized[[42]byte]{}, sized[[43]byte]{},
		sized[[44]byte]{}, sized[[45]byte]{}, sized[[46]byte]{},
		sized[[47]byte]{}, sized[[48]byte]{}, sized[[49]byte]{},
		sized[[50]byte]{}, sized[[51]byte]{}, sized[[52]byte]{},
		sized[[53]byte]{}, sized[[54]byte]{}, sized[[55]byte]{},
		sized[[56]byte]{}, sized[[57]byte]{}, sized[[58]byte]{},
		sized[[59]byte]{}, sized[[60]byte]{}, sized[[61]byte]{},
		sized[[62]byte]{}, sized[[63]byte]{}, sized[[64]byte]{},
		sized[[65]byte]{}, sized[[66]byte]{}, sized[[67]byte]{},
		sized[[68]byte]{}, sized[[69]byte]{}, sized[[70]byte]{},
		sized[[71]byte]{}, sized[[72]byte]{}, sized[[73]byte]{},
		sized[[74]byte]{}, sized[[75]byte]{}, sized[[76]byte]{},
		sized[[77]byte]{}, sized[[78]byte]{}, sized[[79]byte]{},
	}
	var e errorTable
	e.init()
	for range 2 {
		for _, err := range errs {
			words := *(*[2]unsafe.Pointer)(unsafe.Pointer(&err))
			if got, want := e.typeName(words[0], err), reflect.TypeOf(err).String(); got != want {
				t.Fatalf("named %s, want %s", got, want)
			}
		}
	}
}
