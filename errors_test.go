//go:build calltrail

package calltrail

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"testing"

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
	}
	return n, nil
}

type panicky struct{ s string }

func (p *panicky) Error() string { return p.s }

// TestErrorsRecorded checks that each call of a function with an error
// result carries the error it returned: none, a sentinel, a pointer type
// with its message, an error whose Error method panics, a long message.
func TestErrorsRecorded(t *testing.T) {
	got := record(t, options{}, func() {
		for n := range 5 {
			fails(n)
		}
	})
	calls := allCalls(got)
	for _, want := range []string{
		`->test.fails <-test.fails ->test.fails`,
		`<-test.fails err=*errors.errorString "file does not exist"`,
		`<-test.fails err=*fs.PathError "open x: file does not exist"`,
		`<-test.fails err=*calltrail.panicky "(its Error method panicked)"`,
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("calls lack %s:\n%s", want, calls)
		}
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
		e.id(&fs.PathError{Op: "open", Path: strconv.Itoa(i), Err: fs.ErrNotExist})
	}
	if n := len(e.all()); n > maxErrors {
		t.Errorf("%d distinct errors kept, want at most %d", n, maxErrors)
	}
	if last := e.all()[len(e.all())-1]; last != overflow {
		t.Errorf("the table's last entry is %+v, want the overflow note", last)
	}
}
