package text_test

import (
	"flag"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/internal/text"
	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/query"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// A program whose main calls D through two chains, one of which fails,
// and recurses through even and odd.
const script = `
1 +main.main 0
1 +main.load 10
1 +main.D 20
1 -bad 50
1 - 60
1 +main.D 70
1 - 80
1 +main.even 90
1 +main.odd 100
1 +main.even 110
1 - 120
1 - 130
1 - 140
1 - 200
`

func trace(t *testing.T) *query.Trace {
	t.Helper()
	return query.New("t.out", analysis.Analyze(tracetest.Read(t, script), analysis.Options{Slowest: 2}))
}

func TestTables(t *testing.T) {
	tr := trace(t)
	var b strings.Builder
	text.Findings(&b, tr.Findings)
	text.Report(&b, tr.Functions("self", 0), false)
	b.WriteString("\n")
	ids, err := tr.Lookup("main.D")
	if err != nil {
		t.Fatal(err)
	}
	chains, _ := tr.Chains(ids, 0)
	text.Chains(&b, chains, 3)
	b.WriteString("\n")
	even, _ := tr.Lookup("main.even")
	chains, _ = tr.Chains(even, 0)
	text.Chains(&b, chains, 3)
	b.WriteString("\n")
	text.Goroutines(&b, tr.Profile.Duration, tr.Goroutines(10, 0))
	tracetest.Golden(t, "tables.golden", b.String(), *update)
}
