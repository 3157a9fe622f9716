package query_test

import (
	"fmt"
	"log"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/tracefile"
)

// exampleTrace opens testdata/example.trace: main.main reaching main.D
// twice, once through main.A and once through a recursion of main.walk
// three deep.
func exampleTrace() *tracefile.Reader {
	f, err := tracefile.Open("testdata/example.trace") // the Reader keeps it open

	if err != nil {
		log.Fatal(err)
	}
	return f.Reader
}

// The chains that reached a function, recursion folded, with their calls
// and times: what calltrail chains prints, and the web UI's function
// view shows.
func ExampleTrace_Chains() {
	t := query.New("example.out", analysis.Analyze(exampleTrace(), analysis.Options{Slowest: 1}))
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
	t := query.New("example.out", analysis.Analyze(exampleTrace(), analysis.Options{}))
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
