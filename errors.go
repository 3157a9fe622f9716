package calltrail

import (
	"reflect"
	"sync"
	"unicode/utf8"

	"github.com/calltrail/calltrail/tracefile"
)

// errorTable interns the errors calls return, by dynamic type and
// message, for the trace's error table. It is used off the hot path only:
// when a call returns an error that is not nil.
type errorTable struct {
	mu      sync.Mutex
	ids     map[errorKey]uint32
	list    []tracefile.Error // index is id; list[0] is unused
	written int               // list[1:written] are in the file; writer only
}

const (
	// maxErrors bounds the distinct errors a trace names; past it, an
	// error is recorded as the last entry, which says so.
	maxErrors = 1 << 16
	// MaxErrorMessage is the most bytes of an error's message a trace
	// keeps; a longer one is cut, at a character, and ends with "…".
	MaxErrorMessage = 200
)

// errorKey is an error as the table knows it; a struct, not a string
// made of both, so that looking an error up allocates nothing.
type errorKey struct{ typ, msg string }

// overflow is the error table's last entry.
var overflow = tracefile.Error{Type: "(calltrail)", Message: "more distinct errors than calltrail keeps; this one is not named"}

func (e *errorTable) init() {
	e.ids = map[errorKey]uint32{}
	e.list = []tracefile.Error{{}}
	e.written = 1
}

// id returns the id of err, which is not nil, adding it if needed. It
// calls err's Error method, which is the program's code: a panic in it
// is recovered and named instead.
func (e *errorTable) id(err error) uint32 {
	msg := message(err)
	e.mu.Lock()
	defer e.mu.Unlock()
	name := reflect.TypeOf(err).String() // the type's own name: no allocation
	key := errorKey{name, msg}
	if id, ok := e.ids[key]; ok {
		return id
	}
	if len(e.list) > maxErrors {
		return uint32(len(e.list) - 1)
	}
	id := uint32(len(e.list))
	x := tracefile.Error{Type: name, Message: msg}
	if len(e.list) == maxErrors {
		x = overflow
	} else {
		e.ids[key] = id
	}
	e.list = append(e.list, x)
	return id
}

// message returns err's message, cut to MaxErrorMessage bytes.
func message(err error) (msg string) {
	defer func() {
		if p := recover(); p != nil {
			msg = "(its Error method panicked)"
		}
	}()
	msg = err.Error()
	if len(msg) > MaxErrorMessage {
		cut := MaxErrorMessage - len("…")
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// unwritten returns the errors added since the last call, and the id of
// the first.
func (e *errorTable) unwritten() (uint32, []tracefile.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	first := e.written
	es := append([]tracefile.Error(nil), e.list[first:]...)
	e.written = len(e.list)
	return uint32(first), es
}

// all returns every error of the table, from id 1.
func (e *errorTable) all() []tracefile.Error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]tracefile.Error(nil), e.list[1:]...)
}
