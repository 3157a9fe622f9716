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

// A caller that works on every event of a large trace reads ahead, on
// another core, and takes most events as Calls, leaving the rest to Read.
func ExampleReader_ReadCall() {
	f, err := tracefile.Open("testdata/sample.trace")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	f.ReadAhead()
	var time int64 // in the calls, added up
	var ev tracefile.Event
	for {
		if c, ok := f.ReadCall(); ok {
			if c.Kind() == tracefile.ExitEvent {
				time += c.Time - c.Start
			}
			continue
		}
		err := f.Read(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		if ev.Kind == tracefile.ExitEvent {
			time += int64(ev.Duration())
		}
	}
	fmt.Println(f.Calls(), "calls,", time, "ns")
	// Output:
	// 5 calls, 1960 ns
}
