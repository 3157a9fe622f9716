package tracefile_test

import (
	"fmt"
	"io"
	"log"

	"github.com/calltrail/calltrail/tracefile"
)

// A trace is read as a stream of events; exit events carry their
// function, start and depth.
func ExampleReader() {
	f, err := tracefile.Open("testdata/sample.trace")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	exits := 0
	for {
		ev, err := f.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		if ev.Kind == tracefile.ExitEvent {
			if exits < 3 {
				fmt.Printf("g%d %s, depth %d\n", ev.G, f.Func(ev.Func).Name, ev.Depth)
			}
			exits++
		}
	}
	end, _ := f.End()
	fmt.Println(exits, "calls;", f.Meta().Program, end)
	// Output:
	// g4 main.A, depth 2
	// g5 main.B, depth 1
	// g9 main.A, depth 1
	// 5 calls; sample main returned
}
