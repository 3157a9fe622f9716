package query

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/tracefile"
)

// load analyses a trace made by tracetest.
func load(t testing.TB, data []byte, err error) *Trace {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	r, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	p := analysis.Analyze(r, analysis.Options{Slowest: 3})
	if p.Err != nil {
		t.Fatal(p.Err)
	}
	return New("test", p)
}

func script(t testing.TB, s string) *Trace {
	data, err := tracetest.Build(s)
	return load(t, data, err)
}

// TestChainsFoldRecursion: a recursion 30,000 deep is one chain, with its
// depth, and the time of its outermost call.
func TestChainsFoldRecursion(t *testing.T) {
	const depth = 30_000
	tr := load(t, tracetest.Recursion(depth), nil)
	id, err := tr.Func("main.rec")
	if err != nil {
		t.Fatal(err)
	}
	chains, more := tr.Chains([]uint32{id}, 0)
	if len(chains) != 1 || more != 0 {
		t.Fatalf("%d chains, %d more: want one", len(chains), more)
	}
	c := chains[0]
	want := []Step{{Name: "main.main"}, {Name: "main.rec", Repeat: depth}}
	if !reflect.DeepEqual(c.Path, want) || c.Calls != depth {
		t.Errorf("chain %+v, %d calls; want %+v, %d", c.Path, c.Calls, want, depth)
	}
	// The outermost call holds the others: the chain's time is its.
	outer := tr.Profile.Funcs[id].Total
	if c.TotalNs != outer {
		t.Errorf("total %d, want the outermost call's %d", c.TotalNs, outer)
	}
	leaf, _ := tr.Func("main.leaf")
	chains, _ = tr.Chains([]uint32{leaf}, 0)
	want = append(want, Step{Name: "main.leaf"})
	if len(chains) != 1 || !reflect.DeepEqual(chains[0].Path, want) {
		t.Errorf("chains of main.leaf: %+v, want one: %+v", chains, want)
	}
}

// TestChainsMutualRecursion folds a cycle of two functions.
func TestChainsMutualRecursion(t *testing.T) {
	tr := script(t, `
1 +main.main 0
1 +A 1
1 +B 2
1 +A 3
1 +B 4
1 +C 5
1 - 6
1 - 7
1 - 8
1 - 9
1 +C 10
1 - 11
1 - 12
1 - 13
`)
	c, _ := tr.Func("C")
	chains, _ := tr.Chains([]uint32{c}, 0)
	var got [][]Step
	for _, ch := range chains {
		got = append(got, ch.Path)
	}
	// main.main -> A -> B -> A -> B -> C folds to the cycle of A and B
	// run twice; the second C is called by the outer A, a chain of its
	// own.
	want := [][]Step{
		{{Name: "main.main"}, {Cycle: []Step{{Name: "A"}, {Name: "B"}}, Repeat: 2}, {Name: "C"}},
		{{Name: "main.main"}, {Name: "A"}, {Name: "C"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("chains of C:\n%+v\nwant\n%+v", got, want)
	}
}

// TestCompare matches chains by name in two traces, and lists what
// appeared and vanished.
func TestCompare(t *testing.T) {
	base := script(t, `
1 +main.main 0
1 +A 10
1 - 30
1 +B 40
1 - 50
1 - 60
`)
	cur := script(t, `
1 +main.main 0
1 +A 10
1 - 50
1 +C 60
1 - 65
1 - 70
`)
	d := Compare(base, cur, 0)
	byChain := map[string]Change{}
	for _, c := range d.Chains {
		byChain[stepNames(c.Chain)] = c
	}
	if c := byChain["main.main A"]; c.BaseNs != 20 || c.NewNs != 40 || c.DeltaNs != 20 || c.Appeared || c.Vanished {
		t.Errorf("main.main -> A: %+v", c)
	}
	if c := byChain["main.main B"]; !c.Vanished || c.BaseNs != 10 {
		t.Errorf("main.main -> B: %+v", c)
	}
	if c := byChain["main.main C"]; !c.Appeared || c.NewNs != 5 {
		t.Errorf("main.main -> C: %+v", c)
	}
	if d.Chains[0].DeltaNs != 20 {
		t.Errorf("largest change first: %+v", d.Chains)
	}
}

// TestHistogramAgreesWithQuantiles: the bars count every call, and the
// bar holding the median holds the median the figures give.
func TestHistogramAgreesWithQuantiles(t *testing.T) {
	var s string
	tm := 0
	s += "1 +main.main 0\n"
	for i := 0; i < 1000; i++ {
		d := 10 + i*i%5000
		s += "1 +F " + strconv.Itoa(tm+1) + "\n1 - " + strconv.Itoa(tm+1+d) + "\n"
		tm += d + 2
	}
	s += "1 - " + strconv.Itoa(tm+1) + "\n"
	tr := script(t, s)
	id, _ := tr.Func("F")
	bars := tr.Histogram(id, nil)
	if len(bars) == 0 || len(bars) > maxBars {
		t.Fatalf("%d bars", len(bars))
	}
	var n uint64
	for _, b := range bars {
		n += b.Count
	}
	if n != 1000 {
		t.Errorf("bars count %d calls, want 1000", n)
	}
	f := tr.function(tr.Profile.Funcs[id])
	var seen uint64
	for _, b := range bars {
		seen += b.Count
		if seen >= 500 {
			if f.P50Ns < b.LoNs || f.P50Ns >= b.HiNs {
				t.Errorf("p50 %d outside the bar [%d, %d) holding the 500th call", f.P50Ns, b.LoNs, b.HiNs)
			}
			break
		}
	}
}

// TestLookup finds by exact name, by regular expression, and suggests
// names close to an unknown one.
func TestLookup(t *testing.T) {
	tr := script(t, `
1 +main.main 0
1 +main.parseValue 1
1 - 2
1 - 3
`)
	if ids, err := tr.Lookup("main.parseValue"); err != nil || len(ids) != 1 {
		t.Errorf("exact: %v, %v", ids, err)
	}
	if ids, err := tr.Lookup("^main\\."); err != nil || len(ids) != 2 {
		t.Errorf("regexp: %v, %v", ids, err)
	}
	// A full name ending in $, as a pattern naming one function is
	// written: (* makes it no valid regular expression, but a name.
	method := script(t, `
1 +main.(*parser).value 0
1 +main.(*parser).valueArray 1
1 - 2
1 - 3
`)
	if ids, err := method.Lookup("main.(*parser).value$"); err != nil || len(ids) != 1 || method.Profile.Name(ids[0]) != "main.(*parser).value" {
		t.Errorf("a full name ending in $: %v, %v", ids, err)
	}
	// Without the start of its import path, as go doc names it, when
	// only one function has that name: vm.(*VM).Run is no valid
	// regular expression.
	short := script(t, `
1 +example.com/expr/vm.(*VM).Run 0
1 +example.com/expr/vm.(*VM).pop 1
1 - 2
1 +example.com/expr/other.(*VM).pop 3
1 - 4
1 - 5
1 +example.com/ristretto.(*Cache[...]).Set 6
1 +example.com/ristretto/z.KeyToHash[...] 7
1 - 8
1 - 9
`)
	for query, want := range map[string]string{
		"vm.(*VM).Run":      "example.com/expr/vm.(*VM).Run",
		"(*VM).Run":         "example.com/expr/vm.(*VM).Run",
		"expr/vm.(*VM).pop": "example.com/expr/vm.(*VM).pop",
		"other.(*VM).pop":   "example.com/expr/other.(*VM).pop",
		"(*VM).pop":         "", // two functions
		// Generic, as calltrail writes the names and as Go does.
		"ristretto.(*Cache[...]).Set": "example.com/ristretto.(*Cache[...]).Set",
		"(*Cache[K, V]).Set":          "example.com/ristretto.(*Cache[...]).Set",
		"z.KeyToHash[...]":            "example.com/ristretto/z.KeyToHash[...]",
		"z.KeyToHash[K]":              "example.com/ristretto/z.KeyToHash[...]",
		"z.KeyToHash":                 "example.com/ristretto/z.KeyToHash[...]",
		"m.(*VM).Run":                 "", // not at a dot or slash
		"example.com/expr/vm.(*":      "",
	} {
		ids, err := short.Lookup(query)
		if want == "" {
			if err == nil {
				t.Errorf("%s: %v, want none", query, ids)
			}
			continue
		}
		if err != nil || len(ids) != 1 || short.Profile.Name(ids[0]) != want {
			t.Errorf("%s: %v, %v; want %s", query, ids, err, want)
		}
	}
	// Func, which the web UI asks, takes them too.
	if id, err := short.Func("vm.(*VM).Run"); err != nil || short.Profile.Name(id) != "example.com/expr/vm.(*VM).Run" {
		t.Errorf("Func(vm.(*VM).Run): %v, %v", id, err)
	}
	if _, err := short.Func("(*VM).pop"); err == nil {
		t.Errorf("Func((*VM).pop), two functions: no error")
	}
	_, err := tr.Lookup("main.parsevalu")
	nf, ok := err.(*NotFoundError)
	if !ok || len(nf.Near) == 0 || nf.Near[0] != "main.parseValue" {
		t.Errorf("unknown: %v", err)
	}
	// Near, without the import path, with type parameters as Go writes.
	_, err = short.Lookup("(*Cache[K, V]).Sett")
	if nf, ok := err.(*NotFoundError); !ok || len(nf.Near) == 0 || nf.Near[0] != "example.com/ristretto.(*Cache[...]).Set" {
		t.Errorf("(*Cache[K, V]).Sett: %v", err)
	}
	// Near, by its own name alone, misspelt, among short names that are
	// nearer as whole strings (go-yaml's nodeToValue, beside token.New).
	yaml := script(t, `
1 +github.com/goccy/go-yaml.(*Decoder).nodeToValue 0
1 - 1
1 +github.com/goccy/go-yaml/token.New 2
1 - 3
1 +github.com/goccy/go-yaml/ast.Parent 4
1 - 5
1 +github.com/go-chi/chi/v5/middleware.Recoverer 6
1 - 7
1 +github.com/go-chi/chi/v5.chain 8
1 - 9
`)
	for query, want := range map[string]string{
		"nodeToValeu":          "github.com/goccy/go-yaml.(*Decoder).nodeToValue",
		"Decoder).nodeToValeu": "github.com/goccy/go-yaml.(*Decoder).nodeToValue",
		"Recoverr":             "github.com/go-chi/chi/v5/middleware.Recoverer",
	} {
		_, err := yaml.Lookup(query)
		if nf, ok := err.(*NotFoundError); !ok || len(nf.Near) == 0 || nf.Near[0] != want {
			t.Errorf("%s: %v; want %s nearest", query, err, want)
		}
	}
}

// TestOutside explains each way a function can be outside a trace, from
// its coverage, and falls back on the closest names.
func TestOutside(t *testing.T) {
	cov := []tracefile.Coverage{{
		Package: "example.com/app",
		Traced:  []string{"main.main", "main.idle", "main.(*list).Get", "main.Get"},
		Omitted: []tracefile.Omitted{
			{Name: "main.add", File: "main.go", Line: 9, Why: tracefile.WhyInlined, Detail: "main.go:9: &vec{...} escapes to heap"},
			{Name: "main.With[...]", File: "opt.go", Line: 3, Why: tracefile.WhyInlined, Detail: "opt.go:3: &with{...} escapes to heap"},
			{Name: "main.only", File: "main.go", Line: 10, Why: tracefile.WhyFuncs},
			{Name: "main.noisy", File: "main.go", Line: 11, Why: tracefile.WhyExclude},
			{Name: "main.hidden", File: "main.go", Line: 12, Why: tracefile.WhyIgnored},
			{Name: "main.fast", File: "main.go", Line: 13, Why: tracefile.WhyNosplit},
			{Name: "main.parse", File: "parser.go", Line: 14, Why: tracefile.WhyGenerated},
			{Name: "main.now", File: "main.go", Line: 15, Why: tracefile.WhyNoBody},
		},
		Untraced: []tracefile.Untraced{
			{Path: "fmt", Why: "in the standard library: calltrail's runtime uses it"},
			{Path: "gopkg.in/yaml", Why: "not in the main module"},
			{Path: "gopkg.in/yaml.v3", Why: "not in the main module: --pkgs gopkg.in/yaml.v3 traces it"},
		},
	}}
	for name, want := range map[string]string{
		"main.add":    "main.add is not traced: kept inlined, so that a value stays off the heap (main.go:9: &vec{...} escapes to heap); --inlined traces it",
		"main.only":   "main.only is not traced: not matched by --funcs",
		"main.noisy":  "main.noisy is not traced: matched by --exclude",
		"main.hidden": "main.hidden is not traced: marked //calltrail:ignore (main.go:12)",
		"main.fast":   "main.fast is not traced: marked //go:nosplit (main.go:13)",
		"main.parse":  "main.parse is not traced: parser.go is a generated file",
		"main.now":    "main.now is not traced: declared without a Go body (main.go:15)",
		"main.idle":   "main.idle is traced, but was not called in this run",
		// As go doc names a generic function, and without its package.
		"main.With": "main.With[...] is not traced: kept inlined",
		"With":      "main.With[...] is not traced: kept inlined",
		"With[...]": "main.With[...] is not traced: kept inlined",
		// With type arguments, as Go writes them.
		"main.With[int, string]": "main.With[...] is not traced: kept inlined",
		"With[T]":                "main.With[...] is not traced: kept inlined",
		"idle":                   "main.idle is traced, but was not called in this run",
		// Two functions have it: which one is not for Outside to guess.
		"Get":                "",
		"main.nope":          "main.nope is not in the trace: package main was instrumented, and has no function of that name",
		"fmt.Println":        "fmt.Println is not traced: package fmt was not instrumented (in the standard library: calltrail's runtime uses it)",
		"gopkg.in/yaml.v3.F": "package gopkg.in/yaml.v3 was not instrumented (not in the main module: --pkgs gopkg.in/yaml.v3 traces it)",
		"other.F":            "",
	} {
		if got := Outside(cov, name); !strings.HasPrefix(got, want) && !strings.Contains(got, want) || (want == "") != (got == "") {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	// A name the build knew the package of and not the function: why,
	// and the names it may be a typo of.
	nf := NotFound(cov, []string{"main.main", "main.idle"}, "main.mian")
	if nf.Why == "" || len(nf.Near) == 0 || nf.Near[0] != "main.main" || !strings.HasSuffix(nf.Error(), "has no function of that name; closest: main.main, main.idle") {
		t.Errorf("main.mian, a name of an instrumented package: %+v", nf)
	}
	nf = NotFound(cov, []string{"main.main", "main.idle"}, "mian.main")
	if nf.Why != "" || len(nf.Near) == 0 || nf.Near[0] != "main.main" {
		t.Errorf("mian.main, a name of no package: %+v", nf)
	}
	// runtime.main is in the table as where goroutines were created, not
	// traced: it is no answer, and not suggested, which would send the
	// user to that answer.
	names := []string{"runtime.main", "main.main", "main.idle"}
	if nf := NotFound(cov, names, "runtime.main"); !strings.Contains(nf.Why, "runtime.main is not traced") {
		t.Errorf("runtime.main, named but not traced: %+v", nf)
	}
	if nf := NotFound(cov, names, "ain"); len(nf.Near) != 2 || slices.Contains(nf.Near, "runtime.main") {
		t.Errorf("ain: the traced names only: %+v", nf)
	}
	// A name longer than anyone types (a request to the web UI) gets
	// no suggestion, which would cost its length times every name's,
	// and its error does not repeat it whole.
	long := strings.Repeat("a", 100_000)
	if nf := NotFound(cov, names, long); len(nf.Near) != 0 || len(nf.Error()) > 2*maxQuery {
		t.Errorf("a name of 100,000 bytes: %d suggestions, an error of %d bytes", len(nf.Near), len(nf.Error()))
	}
}

// TestLookupUntraced: a function the trace's table names only as where
// goroutines were created or started is not one to ask about, by name or
// by pattern; and on a trace read only in part, a traced function without
// calls may have had them in the rest.
func TestLookupUntraced(t *testing.T) {
	tr := script(t, `
1 +main.main 0
1 - 3
`)
	id := uint32(len(tr.names))
	tr.names = append(tr.names, "runtime.main")
	tr.byName["runtime.main"] = id
	tr.Profile.Coverage = []tracefile.Coverage{{Package: "example.com/app", Traced: []string{"main.main", "main.idle"}}}
	if _, err := tr.Lookup("runtime.main"); err == nil || !strings.Contains(err.Error(), "runtime.main is not traced") {
		t.Errorf("runtime.main: %v", err)
	}
	if ids, err := tr.Lookup("main$"); err != nil || len(ids) != 1 || tr.names[ids[0]] != "main.main" {
		t.Errorf("main$: %v, %v", ids, err)
	}
	if why := tr.Outside("main.idle"); why != "main.idle is traced, but was not called in this run" {
		t.Errorf("main.idle: %q", why)
	}
	// A full name the build left out names that function, not the
	// traced ones it is a pattern of: main.timing is not main.timing.func1.
	closure := script(t, `
1 +main.main 0
1 +main.timing.func1 1
1 - 2
1 - 3
`)
	closure.Profile.Coverage = []tracefile.Coverage{{Package: "example.com/app", Traced: []string{"main.main", "main.timing.func1"},
		Omitted: []tracefile.Omitted{{Name: "main.timing", File: "main.go", Line: 9, Why: tracefile.WhyInlined}}}}
	if ids, err := closure.Lookup("main.timing"); err == nil || !strings.Contains(err.Error(), "main.timing is not traced: kept inlined") {
		t.Errorf("main.timing, kept inlined: %v, %v", ids, err)
	}
	if ids, err := closure.Lookup("main.timing."); err != nil || len(ids) != 1 {
		t.Errorf("main.timing., a pattern: %v, %v", ids, err)
	}
	tr.Profile.Err = errors.New("trace is truncated")
	if why := tr.Outside("main.idle"); why != "main.idle is traced, but has no calls in the part of the trace that could be read" {
		t.Errorf("main.idle, the trace cut: %q", why)
	}
}

// TestHistogramKeepsSlowest lists, in a bar with more calls than it
// shows, the slowest of them, slowest first.
func TestHistogramKeepsSlowest(t *testing.T) {
	s := "1 +main.main 0\n"
	tm := 1
	for i := 0; i < 3*barSlowest; i++ {
		s += "1 +F " + strconv.Itoa(tm) + "\n1 - " + strconv.Itoa(tm+1000+i) + "\n"
		tm += 1000 + i + 1
	}
	s += "1 - " + strconv.Itoa(tm) + "\n"
	tr := script(t, s)
	id, _ := tr.Func("F")
	var all []Call
	source := func(fn uint32, visit func(Call)) {
		for i := 0; i < 3*barSlowest; i++ {
			c := Call{G: 1, StartNs: int64(i), DurationNs: int64(1000 + i)}
			all = append(all, c)
			visit(c)
		}
	}
	bars := tr.Histogram(id, source)
	var listed []Call
	for _, b := range bars {
		if len(b.Slowest) > barSlowest {
			t.Errorf("bar lists %d calls", len(b.Slowest))
		}
		for i, c := range b.Slowest {
			if i > 0 && c.DurationNs > b.Slowest[i-1].DurationNs {
				t.Errorf("bar lists %+v, not slowest first", b.Slowest)
			}
		}
		listed = append(listed, b.Slowest...)
	}
	// The slowest call of all is listed, whatever bar it falls in.
	found := false
	for _, c := range listed {
		found = found || c.DurationNs == int64(1000+3*barSlowest-1)
	}
	if !found {
		t.Errorf("the slowest call is not listed: %+v", listed)
	}
}

// TestFlameDiff colours a graph against a base: matched boxes get the
// base's values, and the base's boxes with no match are listed as gone.
func TestFlameDiff(t *testing.T) {
	base := script(t, "1 +main.main 0\n1 +A 10\n1 - 30\n1 +B 40\n1 - 50\n1 - 60")
	cur := script(t, "1 +main.main 0\n1 +A 10\n1 - 50\n1 - 60")
	g := FlameGraph(cur.Profile, false, Wall)
	g.Diff(FlameGraph(base.Profile, false, Wall), 0)
	for i := 1; i < g.Len(); i++ {
		name := g.Names[g.Name[i]]
		want := map[string]int64{"main.main": 60, "A": 20}[name]
		if g.Base[i] != want {
			t.Errorf("%s: base %d, want %d", name, g.Base[i], want)
		}
	}
	if len(g.Gone) != 1 || strings.Join(g.Gone[0].Path, " ") != "main.main B" || g.Gone[0].Value != 10 {
		t.Errorf("gone: %+v", g.Gone)
	}
}

// TestCompareFunctions compares functions' self time, largest change
// first, saying what appeared and vanished.
func TestCompareFunctions(t *testing.T) {
	base := script(t, "1 +main 0\n1 +log 1\n1 - 51\n1 +work 60\n1 - 80\n1 - 100")
	cur := script(t, "1 +main 0\n1 +work 10\n1 - 30\n1 +cache 31\n1 - 33\n1 - 40")
	d := Compare(base, cur, 0)
	var got []string
	for _, c := range d.Functions {
		s := c.Name + " " + strconv.Itoa(int(c.BaseNs)) + ">" + strconv.Itoa(int(c.NewNs))
		if c.Appeared {
			s += " appeared"
		}
		if c.Vanished {
			s += " vanished"
		}
		got = append(got, s)
	}
	want := "log 50>0 vanished | main 30>18 | cache 0>2 appeared | work 20>20"
	if s := strings.Join(got, " | "); s != want {
		t.Errorf("functions:\n%s\nwant\n%s", s, want)
	}
	if c := d.Chains[0]; stepNames(c.Chain) != "main" || c.BaseNs != 100 || c.NewNs != 40 {
		t.Errorf("first chain change: %+v", c)
	}
}

// stepNames joins the names of a chain's steps with spaces.
func stepNames(steps []Step) string {
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.Name
	}
	return strings.Join(names, " ")
}

// TestCompareDeepest: a call that got slower makes every chain above it
// slower alike; the diff names the chain that changed, not its prefixes.
func TestCompareDeepest(t *testing.T) {
	base := script(t, `
1 +main.main 0
1 +A 10
1 +B 20
1 - 50
1 +C 55
1 - 58
1 - 60
1 - 100
`)
	cur := script(t, `
1 +main.main 0
1 +A 10
1 +B 20
1 - 1050
1 +C 1055
1 - 1059
1 - 1060
1 - 1100
`)
	var got []string
	for _, c := range Compare(base, cur, 0).Chains {
		if c.DeltaNs != 0 {
			got = append(got, fmt.Sprintf("%s %+d", stepNames(c.Chain), c.DeltaNs))
		}
	}
	// C changed by 1 ns of its 3: a change of its own, which A's 1,000
	// does not explain away; A's and main's are B's.
	want := []string{"main.main A B +1000", "main.main A C +1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changed chains:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFindingFoldsChain: a finding names a chain as chains prints it,
// recursion folded, not the calls one by one.
func TestFindingFoldsChain(t *testing.T) {
	var s strings.Builder
	s.WriteString("1 +main.main 0\n")
	at := 10
	line := func(format string, a ...any) {
		fmt.Fprintf(&s, format+" %d\n", append(a, at)...)
		at += 10
	}
	for range 3 {
		for _, fn := range []string{"main.even", "main.odd", "main.even", "main.odd", "main.even", "main.odd"} {
			line("1 +%s", fn)
		}
		line("1 +main.D")
		line("1 -bad")
		for range 6 {
			line("1 -")
		}
		line("1 +main.B")
		line("1 +main.D")
		line("1 -")
		line("1 -")
	}
	line("1 -")
	data, err := tracetest.Build(s.String())
	tr := load(t, data, err)
	want := "main.D failed in 3 of its 3 calls through main.main -> (main.even -> main.odd) ×3, and never in 3 calls through main.main -> main.B"
	for _, f := range tr.Findings {
		if strings.HasPrefix(f.Message, want) {
			return
		}
	}
	t.Errorf("no finding says %q: %+v", want, tr.Findings)
}

// TestMostly: a function is said to wait on what it waited on most only
// when that wait is its own, not its callees', and a share of its time
// worth naming.
func TestMostly(t *testing.T) {
	tr := script(t, "1 +main.main 0\n1 +main.work 10\n1 - 2000000010\n1 - 2000000020\n")
	lock := "sync.(*Mutex).Lock"
	for _, tt := range []struct {
		wait int64
		want string
	}{
		{27e3, ""}, // 27µs of 2s
		{1.5e9, "waits on " + lock},
	} {
		for _, f := range tr.Profile.Funcs {
			// main waits through work, which waits itself.
			f.Waits = []analysis.Wait{{On: lock, Ns: tt.wait}}
			f.OwnWaits = nil
			if f.Name == "main.work" {
				f.OwnWaits = f.Waits
			}
		}
		for _, f := range tr.Functions("total", 0) {
			want := tt.want
			if f.Name == "main.main" {
				want = ""
			}
			if f.Mostly != want {
				t.Errorf("%s, %d ns of %d waiting: mostly %q, want %q", f.Name, tt.wait, f.TotalNs, f.Mostly, want)
			}
		}
	}
}

// TestWeighs: a flame graph by CPU or wait needs the CPU profile; its
// absence is said with the advice that fits how the trace was taken.
func TestWeighs(t *testing.T) {
	run := script(t, "1 +main.main 0\n1 - 100\n")
	snap := script(t, "meta mode flight\nmeta window_start_ns 10\nmeta window_end_ns 100\n1 +main.main 0\n1 - 100\n")
	for _, tc := range []struct {
		tr   *Trace
		w    Weight
		want string // in the error; "" for none
	}{
		{run, Wall, ""},
		{run, OnCPU, "record with calltrail run, or CALLTRAIL_PROFILES=cpu"},
		{run, OffCPU, "record with calltrail run, or CALLTRAIL_PROFILES=cpu"},
		{snap, OnCPU, "calltrail record --seconds N --cpu"},
	} {
		err := tc.tr.Weighs(tc.w)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s by %s: %v, want %q", tc.tr.Name, tc.w, err, tc.want)
		}
	}
}

// TestFindingChainsTold: a finding that sets two chains side by side
// writes each back to where they differ, where the last four steps of
// both are the same.
func TestFindingChainsTold(t *testing.T) {
	var b strings.Builder
	b.WriteString("1 +main.main 0\n")
	at := 1
	for _, test := range []string{"main.TestBad", "main.TestGood"} {
		for range 2 {
			for _, fn := range append([]string{test}, "main.parse", "main.keyval", "main.val", "main.str", "main.escaped") {
				fmt.Fprintf(&b, "1 +%s %d\n", fn, at)
				at++
			}
			exit := "-"
			if test == "main.TestBad" {
				exit = "-bad"
			}
			for i := range 6 {
				if i > 0 {
					exit = "-"
				}
				fmt.Fprintf(&b, "1 %s %d\n", exit, at)
				at++
			}
		}
	}
	fmt.Fprintf(&b, "1 - %d\n", at)
	tr := script(t, b.String())
	var msg string
	for _, f := range tr.Findings {
		if f.Kind == "errors" {
			msg = f.Message
		}
	}
	if !strings.Contains(msg, "main.TestBad -> main.parse") || !strings.Contains(msg, "main.TestGood -> main.parse") {
		t.Errorf("the finding does not tell the two chains apart: %q", msg)
	}
}
