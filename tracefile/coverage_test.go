package tracefile_test

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

var sampleCoverage = []tracefile.Coverage{
	{
		Package: "example.com/app",
		Traced:  []string{"main.main", "main.D"},
		Omitted: []tracefile.Omitted{
			{Name: "main.add", File: "main.go", Line: 40, Why: tracefile.WhyInlined, Detail: "main.go:40: &vec{...} escapes to heap"},
			{Name: "main.fast", File: "main.go", Line: 44, Why: tracefile.WhyNosplit},
		},
		Untraced: []tracefile.Untraced{{Path: "fmt", Why: "in the standard library"}},
	},
	{Package: "example.com/lib"},
}

// coverageTrace is a trace whose coverage chunks come before, between
// and after its events, as the runtime writes them while packages
// register.
func coverageTrace(t testing.TB, cs []tracefile.Coverage) []byte {
	var buf bytes.Buffer
	e, err := tracewrite.NewEncoder(&buf, map[string]string{"program": "coverage"})
	if err != nil {
		t.Fatal(err)
	}
	e.Funcs(1, []tracefile.Func{{Name: "main.main", File: "main.go", Line: 1}})
	for i, c := range cs {
		e.Coverage(tracewrite.AppendCoverage(nil, c))
		var b tracewrite.Batch
		b.Enter(1, 1, int64(10*i))
		b.Exit(1, tracefile.Return, int64(10*i+5))
		e.Events(&b)
	}
	e.End("main returned", time.Unix(0, 0))
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestCoverageRoundTrip(t *testing.T) {
	_, r, err := dump(t, coverageTrace(t, sampleCoverage))
	if err != nil {
		t.Fatal(err)
	}
	got := r.Coverage()
	// Empty lists read back as nil.
	want := append([]tracefile.Coverage(nil), sampleCoverage...)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("coverage:\n%+v\nwant\n%+v", got, want)
	}
	if r.Calls() != 2 {
		t.Errorf("%d calls, want 2: coverage chunks are no events", r.Calls())
	}
}

// TestCoverageDamaged: a coverage chunk whose counts run past its end is
// damage, said as such, not a reason to allocate.
func TestCoverageDamaged(t *testing.T) {
	payload := tracewrite.AppendCoverage(nil, tracefile.Coverage{Package: "p"})
	payload = payload[:len(payload)-1]
	payload = append(payload, 0xff, 0xff, 0xff, 0xff, 0x0f) // 4 billion untraced packages
	var buf bytes.Buffer
	e, _ := tracewrite.NewEncoder(&buf, map[string]string{"program": "damaged"})
	e.Coverage(payload)
	e.Flush()
	r, err := tracefile.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err = r.Next()
		if err != nil {
			break
		}
	}
	if err == io.EOF || !errors.Is(err, tracefile.ErrCorrupt) {
		t.Errorf("err = %v, want a corrupt trace", err)
	}
}
