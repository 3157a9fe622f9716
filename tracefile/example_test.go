package tracefile_test

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/calltrail/calltrail/tracefile"
)

// A trace is written by the runtime and read as a stream of events; exit
// events carry their function, start and depth.
func ExampleReader() {
	var file bytes.Buffer
	e, _ := tracefile.NewEncoder(&file, map[string]string{"program": "example"})
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.main"}, {Name: "main.D"}})
	var b tracefile.Batch
	b.Enter(1, 1, 0)
	b.Enter(1, 2, 100)
	b.Exit(1, tracefile.Return, 1350)
	b.Exit(1, tracefile.Return, 1500)
	e.Clock(1500, 1500)
	e.Events(&b)
	e.End("main returned", time.Unix(0, 0))
	e.Flush()

	r, err := tracefile.NewReader(&file)
	if err != nil {
		panic(err)
	}
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if ev.Kind == tracefile.ExitEvent {
			fmt.Printf("g%d %s took %v at depth %d\n", ev.G, r.Func(ev.Func).Name, ev.Duration(), ev.Depth)
		}
	}
	end, _ := r.End()
	fmt.Println(r.Meta().Program, end)
	// Output:
	// g1 main.D took 1.25µs at depth 2
	// g1 main.main took 1.5µs at depth 1
	// example main returned
}
