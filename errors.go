package calltrail

import (
	"errors"
	"reflect"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/calltrail/calltrail/internal/records"
)

// errorTable interns the errors calls return, by dynamic type and
// message, for the trace's error table. It is used off the hot path only:
// when a call returns an error that is not nil.
type errorTable struct {
	mu      sync.Mutex
	ids     map[errorKey]uint32
	list    []records.Error // index is id; list[0] is unused
	written int             // list[1:written] are in the file; writer only
	// last holds, by goroutine (g % len), the error its last failed
	// call returned: an error returned on up the stack is known without
	// asking its message again, and a chain of wrappings is seen.
	last [256]lastError
	// types caches the ids of the names of values' types, by
	// reflect.Type: the table names them as it names errors' types, so
	// that the cache is the tracer's, as the ids are.
	types sync.Map
	// names caches the names of errors' types, by the first word of the
	// error: for the interface error, its dynamic type's (see typeName).
	names [64]typeName
}

// typeName is a name of an error's type, and the first word of an error
// of that type.
type typeName struct {
	itab unsafe.Pointer
	name string
}

// lastError is the error a goroutine's last failed call returned.
type lastError struct {
	g     uint64
	err   [2]unsafe.Pointer // the interface's words: identity, even for types == would panic on
	id    uint32
	wraps int    // how many failed calls in a row each wrapped the one before
	root  string // the message of the first of them
}

// maxWraps is how many wrappings in a row have their message read: each
// message holds the one it wraps, so reading every one would cost time
// quadratic in the depth of the calls.
const maxWraps = 16

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
var overflow = records.Error{Type: "(calltrail)", Message: "more distinct errors than calltrail keeps; this one is not named"}

func (e *errorTable) init() {
	e.ids = map[errorKey]uint32{}
	e.list = []records.Error{{}}
	e.written = 1
}

// id returns the id of err, which is not nil and which goroutine g's
// call returned, adding it if needed. It calls err's Error method, which
// is the program's code, unless g's last failed call returned err
// itself, or err wraps the error returned before it more than maxWraps
// times in a row: then the message is "…: " and the first one's. A
// panic in Error or Unwrap is recovered, and named instead.
func (e *errorTable) id(g uint64, err error) uint32 {
	words := *(*[2]unsafe.Pointer)(unsafe.Pointer(&err))
	e.mu.Lock()
	last := e.last[g%uint64(len(e.last))]
	e.mu.Unlock()
	if last.g != g {
		last = lastError{}
	} else if last.err == words {
		return last.id // returned on up the stack
	}
	wraps, msg := 0, ""
	if last.g == g && last.err == unwrapWords(err) {
		wraps = last.wraps + 1
	}
	if wraps > maxWraps {
		msg = cut("…: "+last.root, MaxErrorMessage)
	} else {
		msg = message(err)
	}
	root := msg
	if wraps > 0 {
		root = last.root
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	id := e.intern(errorKey{e.typeName(words[0], err), msg})
	e.last[g%uint64(len(e.last))] = lastError{g, words, id, wraps, root}
	return id
}

// typeName returns the name of err's dynamic type, itab being err's
// first word, which names the type as well: an interface's first word
// points at one table per dynamic type, kept for the program's life.
// Asking reflect for the name every time took an eighth of what
// recording an error costs, so the latest names are kept. e.mu is held.
func (e *errorTable) typeName(itab unsafe.Pointer, err error) string {
	c := &e.names[uintptr(itab)/8%uintptr(len(e.names))]
	if c.itab != itab {
		// The type's own name: no allocation.
		*c = typeName{itab, reflect.TypeOf(err).String()}
	}
	return c.name
}

// intern returns the id of error k, adding it if needed.
func (e *errorTable) intern(k errorKey) uint32 {
	if id, ok := e.ids[k]; ok {
		return id
	}
	if len(e.list) > maxErrors {
		return uint32(len(e.list) - 1)
	}
	id := uint32(len(e.list))
	x := records.Error{Type: k.typ, Message: k.msg}
	if len(e.list) == maxErrors {
		x = overflow
	} else {
		e.ids[k] = id
	}
	e.list = append(e.list, x)
	return id
}

// quiet marks, in tracer.seen, a goroutine whose calls are not recorded
// for a while: it runs an error's Error method for ExitErr. Its entry is
// no longer the goroutine's id, nor is the owner of its ring (see
// claim), so Enter takes its slow path, which looks for the mark; the
// hot path pays nothing for it.
const quiet = 1 << 63

// errorID returns the error table's id of err, which goroutine g
// returned, without recording the calls its Error method makes.
func (t *tracer) errorID(g uint64, err error) uint32 {
	slot := &t.seen[g&t.seenMask]
	// g's record is written, since it entered the call now ending; the
	// slot may hold another goroutine, which then writes its record
	// again, as after any collision.
	slot.Store(g | quiet)
	owned := t.quieten(g) // and the hot path does not take its calls either
	defer t.unquieten(owned, g)
	defer slot.CompareAndSwap(g|quiet, g)
	return t.errs.id(g, err)
}

// unwrapWords returns the interface words of the error err wraps, if
// it wraps one; a panic in its Unwrap method is taken for none.
func unwrapWords(err error) (w [2]unsafe.Pointer) {
	defer func() { recover() }()
	inner := errors.Unwrap(err)
	return *(*[2]unsafe.Pointer)(unsafe.Pointer(&inner))
}

// message returns err's message, cut to MaxErrorMessage bytes.
func message(err error) (msg string) {
	defer func() {
		if p := recover(); p != nil {
			msg = "(its Error method panicked)"
		}
	}()
	return cut(err.Error(), MaxErrorMessage)
}

// cut cuts msg to max bytes, at a character, ending it with "…" if it is
// cut.
func cut(msg string, max int) string {
	if len(msg) <= max {
		return msg
	}
	n := max - len("…")
	for n > 0 && !utf8.RuneStart(msg[n]) {
		n--
	}
	return msg[:n] + "…"
}

// unwritten returns the errors added since the last call, and the id of
// the first.
func (e *errorTable) unwritten() (uint32, []records.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	first := e.written
	es := append([]records.Error(nil), e.list[first:]...)
	e.written = len(e.list)
	return uint32(first), es
}

// all returns every error of the table, from id 1.
func (e *errorTable) all() []records.Error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]records.Error(nil), e.list[1:]...)
}
