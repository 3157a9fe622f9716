package analysis_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/tracefile"
)

// Which chains of calls reached main.D, and how long did they take?
func ExampleProfile_Nodes() {
	var file bytes.Buffer
	e, _ := tracefile.NewEncoder(&file, nil)
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.main"}, {Name: "main.A1"}, {Name: "main.A2"}, {Name: "main.D"}})
	var b tracefile.Batch
	b.Enter(1, 1, 0)
	for i, a := range []uint32{2, 3, 2} {
		t := int64(10 + 100*i)
		b.Enter(1, a, t)
		b.Enter(1, 4, t+1)
		b.Exit(1, tracefile.Return, t+1+int64(20*(i+1)))
		b.Exit(1, tracefile.Return, t+90)
	}
	b.Exit(1, tracefile.Return, 400)
	e.Clock(400, 400)
	e.Events(&b)
	e.Flush()

	r, _ := tracefile.NewReader(&file)
	p := analysis.Analyze(r, analysis.Options{})
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
