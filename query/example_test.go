package query_test

import (
	"bytes"
	"fmt"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/tracefile"
)

// A trace of main.main reaching main.D twice, once through main.A and
// once through a recursion of main.walk three deep.
func exampleTrace() *bytes.Buffer {
	var file bytes.Buffer
	e, _ := tracefile.NewEncoder(&file, map[string]string{"program": "example"})
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.main"}, {Name: "main.A"}, {Name: "main.walk"}, {Name: "main.D"}})
	const main, a, walk, d = 1, 2, 3, 4
	var b tracefile.Batch
	t := int64(0)
	enter := func(id uint32, dt int64) { t += dt; b.Enter(1, id, t) }
	exit := func(dt int64) { t += dt; b.Exit(1, tracefile.Return, t) }
	enter(main, 0)
	enter(a, 100)
	enter(d, 100)
	exit(2000)
	exit(100)
	enter(walk, 100)
	enter(walk, 100)
	enter(walk, 100)
	enter(d, 100)
	exit(5000)
	exit(100)
	exit(100)
	exit(100)
	exit(100)
	e.Clock(t, t)
	e.Events(&b)
	e.End("main returned", time.Unix(0, 0))
	e.Flush()
	return &file
}

// The chains that reached a function, recursion folded, with their calls
// and times: what calltrail chains prints, and the web UI's function
// view shows.
func ExampleTrace_Chains() {
	r, err := tracefile.NewReader(exampleTrace())
	if err != nil {
		panic(err)
	}
	t := query.New("example.out", analysis.Analyze(r, analysis.Options{Slowest: 1}))
	id, err := t.Func("main.D")
	if err != nil {
		panic(err)
	}
	chains, _ := t.Chains([]uint32{id}, 0)
	for _, c := range chains {
		for i, s := range c.Path {
			if i > 0 {
				fmt.Print(" -> ")
			}
			fmt.Print(s.Name)
			if s.Repeat > 1 {
				fmt.Printf(" ×%d", s.Repeat)
			}
		}
		fmt.Printf(": %d call, %v\n", c.Calls, time.Duration(c.TotalNs))
	}
	// Output:
	// main.main -> main.A -> main.D: 1 call, 2µs
	// main.main -> main.walk ×3 -> main.D: 1 call, 5µs
}

// The functions of a trace by self time, as calltrail report lists them,
// and a name looked up with suggestions.
func ExampleTrace_Functions() {
	r, err := tracefile.NewReader(exampleTrace())
	if err != nil {
		panic(err)
	}
	t := query.New("example.out", analysis.Analyze(r, analysis.Options{}))
	for _, f := range t.Functions("self", 0) {
		fmt.Printf("%-10s %d calls, self %v, total %v\n", f.Name, f.Calls, time.Duration(f.SelfNs), time.Duration(f.TotalNs))
	}
	if _, err := t.Func("main.wlak"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// main.D     2 calls, self 7µs, total 7µs
	// main.walk  3 calls, self 600ns, total 5.6µs
	// main.main  1 calls, self 300ns, total 8.1µs
	// main.A     1 calls, self 200ns, total 2.2µs
	// no function "main.wlak" in the trace; closest: main.walk, main.A, main.D
}
