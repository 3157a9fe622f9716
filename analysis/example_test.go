package analysis_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/tracefile"
)

// Which chains of calls reached main.D, and how long did they take?
func ExampleProfile_Nodes() {
	// In testdata/example.trace, main.main calls main.A1, main.A2 and
	// main.A1 again, and each of them calls main.D.
	r, err := tracefile.Open("testdata/example.trace")
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	p := analysis.Analyze(r.Reader, analysis.Options{})
	for _, n := range p.Nodes(4) {
		var path []string
		for _, id := range n.Path() {
			path = append(path, p.Name(id))
		}
		fmt.Printf("%s: %d calls, %dns in all\n", strings.Join(path, " -> "), n.Calls, n.Total)
	}
	// Output:
	// main.main -> main.A1 -> main.D: 2 calls, 80ns in all
	// main.main -> main.A2 -> main.D: 1 calls, 40ns in all
}
