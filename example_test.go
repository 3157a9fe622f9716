package calltrail_test

import (
	"fmt"

	"github.com/calltrail/calltrail"
)

// Trace, deferred at the top of a function, records its call when the
// program is built with the calltrail tag (calltrail build, run and test
// add it, or go build -tags calltrail); without the tag it does nothing.
// calltrail instrument and build insert faster guards instead (see Enter).
func ExampleTrace() {
	parse := func(s string) int {
		defer calltrail.Trace()()
		return len(s)
	}
	fmt.Println(parse("gopher"))
	// Output: 6
}

// The guard calltrail instrument inserts: one Func per function, in a
// table of the file; Enter returns the zero Call when it records nothing.
func ExampleEnter() {
	var fn = calltrail.Func{Name: "main.parse", File: "main.go", Line: 12}
	parse := func(s string) int {
		if calltrail.Enabled {
			if c := calltrail.Enter(&fn); c != 0 {
				defer calltrail.Exit(c)
			}
		}
		return len(s)
	}
	fmt.Println(parse("gopher"))
	// Output: 6
}
