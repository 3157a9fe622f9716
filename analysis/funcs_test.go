package analysis

import (
	"bytes"
	"testing"
	"time"

	"github.com/calltrail/calltrail/tracefile"
)

// TestFuncs checks self and total time on a trace with recursion:
// main(0..100) calls f(10..90), which calls itself f(20..60) and g(70..80).
func TestFuncs(t *testing.T) {
	var buf bytes.Buffer
	e, err := tracefile.NewEncoder(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.main"}, {Name: "main.f"}, {Name: "main.g"}})
	var b tracefile.Batch
	b.Enter(1, 1, 0)
	b.Enter(1, 2, 10)
	b.Enter(1, 2, 20)
	b.Exit(1, tracefile.Return, 60)
	b.Enter(1, 3, 70)
	b.Exit(1, tracefile.Panic, 80)
	b.Exit(1, tracefile.Return, 90)
	b.Exit(1, tracefile.Return, 100)
	e.Clock(100, 100)
	e.Events(&b)
	e.Flush()
	r, err := tracefile.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Funcs(r)
	if err != nil {
		t.Fatal(err)
	}
	want := []FuncStat{
		{Name: "main.f", Calls: 2, Total: 80, Self: 70, Max: 80},
		{Name: "main.main", Calls: 1, Total: 100, Self: 20, Max: 100},
		{Name: "main.g", Calls: 1, Total: 10, Self: 10, Max: 10, Panics: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	_ = time.Nanosecond
}
