//go:build calltrail

package calltrail

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

type point struct{ x, y int }

// values is a traced function recording its arguments and results, as
// the instrumenter guards it with --args.
func values(n int, d time.Duration, s string, b []byte, m map[string]int, r io.Reader, e error, p *point, pt point, f float32, ok bool, u uint8) (out string, ctErr error) {
	if Enabled {
		if c := Enter(&funcs[12]); c != 0 {
			Arg(c, n)
			Arg(c, d)
			Arg(c, s)
			Arg(c, b)
			Arg(c, m)
			Arg(c, r)
			Arg(c, e)
			Arg(c, p)
			Arg(c, pt)
			Arg(c, f)
			Arg(c, ok)
			Arg(c, u)
			defer func() { Result(c, out); ExitErr(c, &ctErr) }()
		}
	}
	return strings.Repeat("x", n), nil
}

// TestValues checks the values recorded of each kind.
func TestValues(t *testing.T) {
	got := record(t, options{}, func() {
		values(3, time.Second, strings.Repeat("é", 20), make([]byte, 5), map[string]int{"a": 1}, os.Stdin, nil, nil, point{1, 2}, 0.5, true, 200)
	})
	want := `->test.values arg=3 arg=1000000000 arg="` + strings.Repeat("é", 16) + `"… arg=len=5 arg=len=1 arg=*os.File arg=nil arg=nil arg=calltrail.point arg=0.5 arg=true arg=200 result="xxx" <-test.values`
	if all := allCalls(got); !strings.Contains(all, want) {
		t.Errorf("got  %s\nwant %s", all, want)
	}
}

// TestValuesFree checks that recording values allocates nothing.
func TestValuesFree(t *testing.T) {
	skipFallback(t)
	defer useTracer(t, t.TempDir()+"/t.out", options{})()
	funcs[12].id.Store(0)
	b, m := make([]byte, 5), map[string]int{"a": 1}
	var r io.Reader = os.Stdin
	values(1, time.Second, "s", b, m, r, nil, &point{}, point{}, 1, true, 1) // the types named once
	if n := testing.AllocsPerRun(1000, func() {
		values(1, time.Second, "a string longer than thirty-two bytes", b, m, r, io.EOF, &point{}, point{}, 1, true, 1)
	}); n != 0 { // strings.Repeat of one byte returns its argument
		t.Errorf("a traced call recording values allocates %v times", n)
	}
}
