package tracefile

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

// TestValues checks that values round-trip, of every kind, and that the
// times of the events around them stay exact although the values ride in
// their time deltas.
func TestValues(t *testing.T) {
	long := strings.Repeat("abcdefghij", 5)
	r, err := NewReader(bytes.NewReader(valueTrace(long)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case ValueEvent:
			s := ev.Value.String()
			if ev.Value.Result {
				s = "=" + s
			}
			got = append(got, s)
		case ExitEvent:
			got = append(got, "exit", time.Duration(ev.Time-ev.Start).String())
		}
	}
	want := []string{"-9223372036854775808", `"` + long[:MaxValueString] + `"…`, `"abc"`, `""`, "-2.5", "len=7", "*os.File", "nil", "=true", "=18446744073709551615", "exit", "150ns"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// valueTrace is a trace of one call with values of every kind, long the
// string cut.
func valueTrace(long string) []byte {
	var buf bytes.Buffer
	e, _ := NewEncoder(&buf, nil)
	e.Clock(0, 0)
	e.Funcs(1, []Func{{Name: "main.D"}})
	e.Errors(1, []Error{{Type: "*os.File"}})
	var b Batch
	b.Enter(1, 1, 100)
	b.Value(1, IntValue, false, uint64(1<<63), "") // the most negative int64
	b.Value(1, StringValue, false, uint64(len(long)), long)
	b.Value(1, StringValue, false, 3, "abc")
	b.Value(1, StringValue, false, 0, "")
	b.Value(1, FloatValue, false, math.Float64bits(-2.5), "")
	b.Value(1, LenValue, false, 7, "")
	b.Value(1, TypeValue, false, 1, "")
	b.Value(1, NilValue, false, 0, "")
	b.Value(1, BoolValue, true, 1, "")
	b.Value(1, UintValue, true, math.MaxUint64, "")
	b.Exit(1, Return, 250)
	e.Events(&b)
	e.End("main returned", time.Unix(0, 0))
	e.Flush()
	return buf.Bytes()
}

// TestBadValues checks that damaged values are errors, not panics.
func TestBadValues(t *testing.T) {
	for name, fill := range map[string]func(b *Batch){
		"no call":      func(b *Batch) { b.Value(1, IntValue, false, 1, "") },
		"unknown kind": func(b *Batch) { b.Enter(1, 1, 1); b.put(1, RawValue(1, maxValueKind, false)&RawOpMask, 0) },
		"unknown type": func(b *Batch) { b.Enter(1, 1, 1); b.Value(1, TypeValue, false, 9, "") },
		"bytes alone":  func(b *Batch) { b.Enter(1, 1, 1); b.put(1, RawValueBytes(1)&RawOpMask, 0) },
		"string cut off": func(b *Batch) {
			b.Enter(1, 1, 1)
			b.put(1, RawValue(1, StringValue, false)&RawOpMask, 5)
			b.Value(1, IntValue, false, 1, "")
		},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			e, _ := NewEncoder(&buf, nil)
			e.Clock(0, 0)
			e.Funcs(1, []Func{{Name: "main.D"}})
			var b Batch
			fill(&b)
			e.Events(&b)
			e.Flush()
			r, err := NewReader(&buf)
			if err != nil {
				t.Fatal(err)
			}
			for err == nil {
				_, err = r.Next()
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("got %v, want corruption", err)
			}
		})
	}
}
