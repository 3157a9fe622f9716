package tracefile_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/internal/wire"
	"github.com/calltrail/calltrail/tracefile"
)

// TestValues checks that values round-trip, of every kind, and that the
// times of the events around them stay exact although the values ride in
// their time deltas.
func TestValues(t *testing.T) {
	long := strings.Repeat("abcdefghij", 5)
	r, err := tracefile.NewReader(bytes.NewReader(valueTrace(long)))
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
		case tracefile.ValueEvent:
			s := ev.Value.String()
			if ev.Value.Result {
				s = "=" + s
			}
			got = append(got, s)
		case tracefile.ExitEvent:
			got = append(got, "exit", time.Duration(ev.Time-ev.Start).String())
		}
	}
	want := []string{"-9223372036854775808", `"` + long[:tracefile.MaxValueString] + `"…`, `"abc"`, `""`, "-2.5", "len=7", "*os.File", "nil", "=true", "=18446744073709551615", "exit", "150ns"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// valueTrace is a trace of one call with values of every kind, long the
// string cut.
func valueTrace(long string) []byte {
	var buf bytes.Buffer
	e, _ := tracewrite.NewEncoder(&buf, nil)
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.D"}})
	e.Errors(1, []tracefile.Error{{Type: "*os.File"}})
	var b tracewrite.Batch
	b.Enter(1, 1, 100)
	b.Value(1, tracefile.IntValue, false, uint64(1<<63), "") // the most negative int64
	b.Value(1, tracefile.StringValue, false, uint64(len(long)), long)
	b.Value(1, tracefile.StringValue, false, 3, "abc")
	b.Value(1, tracefile.StringValue, false, 0, "")
	b.Value(1, tracefile.FloatValue, false, math.Float64bits(-2.5), "")
	b.Value(1, tracefile.LenValue, false, 7, "")
	b.Value(1, tracefile.TypeValue, false, 1, "")
	b.Value(1, tracefile.NilValue, false, 0, "")
	b.Value(1, tracefile.BoolValue, true, 1, "")
	b.Value(1, tracefile.UintValue, true, math.MaxUint64, "")
	b.Exit(1, tracefile.Return, 250)
	e.Events(&b)
	e.End("main returned", time.Unix(0, 0))
	e.Flush()
	return buf.Bytes()
}

// TestBadValues checks that damaged values are errors, not panics.
func TestBadValues(t *testing.T) {
	for name, fill := range map[string]func(b *tracewrite.Batch){
		"no call": func(b *tracewrite.Batch) { b.Value(1, tracefile.IntValue, false, 1, "") },
		"unknown kind": func(b *tracewrite.Batch) {
			b.Enter(1, 1, 1)
			b.AppendRaw([]tracewrite.Raw{{Word: tracewrite.RawValue(1, tracefile.ValueKind(wire.ValueBytes+1), false), Time: 0}})
		},
		"unknown type": func(b *tracewrite.Batch) { b.Enter(1, 1, 1); b.Value(1, tracefile.TypeValue, false, 9, "") },
		"bytes alone": func(b *tracewrite.Batch) {
			b.Enter(1, 1, 1)
			b.AppendRaw([]tracewrite.Raw{{Word: tracewrite.RawValueBytes(1), Time: 0}})
		},
		"string cut off": func(b *tracewrite.Batch) {
			b.Enter(1, 1, 1)
			b.AppendRaw([]tracewrite.Raw{{Word: tracewrite.RawValue(1, tracefile.StringValue, false), Time: 5}})
			b.Value(1, tracefile.IntValue, false, 1, "")
		},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			e, _ := tracewrite.NewEncoder(&buf, nil)
			e.Clock(0, 0)
			e.Funcs(1, []tracefile.Func{{Name: "main.D"}})
			var b tracewrite.Batch
			fill(&b)
			e.Events(&b)
			e.Flush()
			r, err := tracefile.NewReader(&buf)
			if err != nil {
				t.Fatal(err)
			}
			for err == nil {
				_, err = r.Next()
			}
			if !errors.Is(err, tracefile.ErrCorrupt) {
				t.Errorf("got %v, want corruption", err)
			}
		})
	}
}
