package query

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/diagnose"
	"github.com/calltrail/calltrail/tracefile"
)

// Trace is an analysed trace, ready to answer questions. It is read-only
// once made, so concurrent queries share it freely.
type Trace struct {
	Name     string // the trace file's name
	Profile  *analysis.Profile
	Findings []diagnose.Finding

	// Indexes of the profile's function table: names by id (id 0
	// unused), and ids by name.
	names  []string
	byName map[string]uint32

	foldOnce sync.Once
	folded   *folding
	edgeOnce sync.Once
	edgeTab  *edgeTable
}

// New makes a Trace of profile p, made by analysis.Analyze from a trace
// file or by a store: p names its functions and errors.
func New(name string, p *analysis.Profile) *Trace {
	n := len(p.FuncTable)
	t := &Trace{Name: name, Profile: p, names: make([]string, n+1), byName: make(map[string]uint32, n)}
	for i, f := range p.FuncTable {
		id := i + 1
		t.names[id] = f.Name
		// A name can have several ids (the same function listed
		// again): keep one with calls.
		if old, dup := t.byName[f.Name]; !dup || p.Funcs[old] == nil {
			t.byName[f.Name] = uint32(id)
		}
	}
	t.Findings = diagnose.Findings(p, 5, t.chainTails)
	return t
}

// chainTail writes the chain of n as every view writes it, folded, its
// last steps only: "… -> (main.even -> main.odd) ×3 -> main.C". It folds
// n's path alone: a finding needs a chain or two, and report none of the
// others.
func (t *Trace) chainTail(n *analysis.Node) string { return t.chainTails(n)[0] }

// chainTails writes the chains of ns as chainTail does, each with steps
// enough to tell it from the others: two chains that end alike are
// written back to where they differ, not cut to the same last four
// steps.
func (t *Trace) chainTails(ns ...*analysis.Node) []string {
	const most = 4
	written := make([][]string, len(ns)) // each chain's steps, written
	steps := make([][]Step, len(ns))
	for i, n := range ns {
		steps[i] = t.pathSteps(n, true)
		for _, st := range steps[i] {
			written[i] = append(written[i], Text([]Step{st}, ""))
		}
	}
	out := make([]string, len(ns))
	for i, s := range steps {
		k := most
		for j := range ns {
			if j != i {
				k = max(k, sameEnd(written[i], written[j])+1)
			}
		}
		switch {
		case len(s) == 0:
			out[i] = "the start of a goroutine"
		case len(s) > k:
			out[i] = "… -> " + Text(s[len(s)-k:], " -> ")
		default:
			out[i] = Text(s, " -> ")
		}
	}
	return out
}

// sameEnd returns how many last elements a and b have in common.
func sameEnd(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}

// Errors returns the errors of ids, each with its count, the most
// returned first, then by message.
func (t *Trace) Errors(ids map[uint32]uint64) []ErrorCount {
	out := make([]ErrorCount, 0, len(ids))
	for id, n := range ids {
		out = append(out, ErrorCount{t.Profile.Error(id), n})
	}
	SortErrors(out)
	return out
}

// SortErrors orders errors as Errors does: the most returned first, then
// by message and type.
func SortErrors(es []ErrorCount) {
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		switch {
		case a.Calls != b.Calls:
			return a.Calls > b.Calls
		case a.Message != b.Message:
			return a.Message < b.Message
		}
		return a.Type < b.Type
	})
}

// ErrorCount is an error calls returned, with how many did.
type ErrorCount struct {
	tracefile.Error
	Calls uint64 `json:"calls"`
}

// NumFuncs is the number of functions in the trace's table.
func (t *Trace) NumFuncs() int { return len(t.names) - 1 }

// Names returns the function table: names by id, id 0 unused. The slice
// is the Trace's own: it must not be changed.
func (t *Trace) Names() []string { return t.names }

// Location returns where function id is declared, "file:line"; "" for
// an id out of range.
func (t *Trace) Location(id uint32) string {
	if id == 0 || int(id) > len(t.Profile.FuncTable) {
		return ""
	}
	f := t.Profile.FuncTable[id-1]
	return fmt.Sprintf("%s:%d", f.File, f.Line)
}

// NotFoundError says that no function matched a query: why, when the
// trace's coverage knows (a function left untraced, or traced and never
// called), and the closest names where the query may be misspelt (a name
// in no package, or in a traced package that has no such function).
type NotFoundError struct {
	Query string
	Why   string // the whole explanation, or ""
	Near  []string
}

func (e *NotFoundError) Error() string {
	if e.Why != "" && len(e.Near) > 0 {
		return fmt.Sprintf("%s; closest: %s", e.Why, strings.Join(e.Near, ", "))
	}
	if e.Why != "" {
		return e.Why
	}
	q := e.Query
	if len(q) > maxQuery {
		q = q[:maxQuery] + "..."
	}
	if len(e.Near) == 0 {
		return fmt.Sprintf("no function %q in the trace", q)
	}
	return fmt.Sprintf("no function %q in the trace; closest: %s", q, strings.Join(e.Near, ", "))
}

// maxQuery bounds the name or pattern a query is compared with every
// function's name for, to suggest the closest, and that its error
// repeats: longer is no name anyone typed, and the comparison costs its
// length times each name's (a name of 20,000 bytes took 8 s over a
// thousand functions, in the web UI as on the command line).
const maxQuery = 256

// Func returns the id of the function named exactly name, or without
// the start of its import path when only one function has that name (see
// Lookup), or a *NotFoundError.
func (t *Trace) Func(name string) (uint32, error) {
	if id, ok := t.byName[name]; ok {
		return id, nil
	}
	if id, ok := t.shortName(name); ok {
		return id, nil
	}
	return 0, t.notFound(name)
}

// notFound is the error for a query no function matched.
func (t *Trace) notFound(query string) *NotFoundError {
	name := Unanchored(query)
	if why, misspelt := outside(t.Profile.Coverage, name, t.Profile.Err != nil); misspelt {
		return &NotFoundError{Query: query, Why: why, Near: t.Near(name, 3)}
	} else if why != "" {
		return &NotFoundError{Query: query, Why: why}
	}
	if _, ok := t.byName[name]; ok {
		return &NotFoundError{Query: query, Why: onlyNamed(name)}
	}
	return &NotFoundError{Query: query, Near: t.Near(name, 3)}
}

// Unanchored returns query without the ^ it starts with or the $ it ends
// with, if any: the name it spells, when it is one. A full name written
// as a pattern that names one function, pkg.(*T).M$, is not a valid
// regular expression, and is that function.
func Unanchored(query string) string {
	return strings.TrimSuffix(strings.TrimPrefix(query, "^"), "$")
}

// onlyNamed explains a function the trace's table names that the build
// did not trace.
func onlyNamed(name string) string {
	return fmt.Sprintf("%s is not traced: the trace names it only as where goroutines were created or started", name)
}

// traced reports whether function id is one to ask about: called, or
// traced by the build (and then not called, which is an answer too). The
// table also names untraced functions that created or started goroutines
// (runtime.main, testing.(*T).Run).
func (t *Trace) traced(id uint32) bool {
	return t.Profile.Funcs[id] != nil || Traced(t.Profile.Coverage, t.names[id])
}

// Lookup finds functions by exact name, or else by regular expression; a
// query that matches none is a *NotFoundError naming the closest
// functions.
func (t *Trace) Lookup(query string) ([]uint32, error) {
	if id, ok := t.byName[Unanchored(query)]; ok {
		// A full name names that function, traced or not: as a
		// pattern, main.timing would answer for main.timing.func1.
		if !t.traced(id) {
			return nil, t.notFound(query)
		}
		return []uint32{id}, nil
	}
	if fullName(t.Profile.Coverage, Unanchored(query)) {
		return nil, t.notFound(query) // one the build left out, or did not see called
	}
	var ids []uint32
	if re, err := regexp.Compile(query); err == nil {
		for id := 1; id < len(t.names); id++ {
			if re.MatchString(t.names[id]) && t.traced(uint32(id)) {
				ids = append(ids, uint32(id))
			}
		}
	}
	if len(ids) == 0 {
		if id, ok := t.shortName(Unanchored(query)); ok {
			return []uint32{id}, nil
		}
		return nil, t.notFound(query)
	}
	return ids, nil
}

// shortName returns the one traced function that name names without the
// start of its import path, as go doc names functions: vm.(*VM).Run or
// (*VM).Run for example.com/expr/vm.(*VM).Run, which as regular
// expressions are not valid, and a generic function without its "[...]".
// ok is false when none or several have that name.
func (t *Trace) shortName(name string) (id uint32, ok bool) {
	// Type parameters as Go writes them, Iterator[T] or F[K, V], or as
	// calltrail does, [...].
	name = strings.TrimSuffix(typeParams.ReplaceAllString(name, "[...]"), "[...]")
	for i := 1; i < len(t.names); i++ {
		full := strings.TrimSuffix(t.names[i], "[...]")
		if (full == name || strings.HasSuffix(full, "."+name) || strings.HasSuffix(full, "/"+name)) && t.traced(uint32(i)) {
			if ok {
				return 0, false
			}
			id, ok = uint32(i), true
		}
	}
	return id, ok
}

// Near returns up to n names of the trace's functions closest to query,
// by edit distance, names containing it first, functions that were
// called before those that were not.
func (t *Trace) Near(query string, n int) []string {
	return closest(t.names[1:], func(i int) bool { return t.Profile.Funcs[uint32(i+1)] != nil }, func(i int) bool { return t.traced(uint32(i + 1)) }, query, n)
}

// typeParams matches a list of type parameters or arguments, [K, V].
var typeParams = regexp.MustCompile(`\[[^\[\]]*\]`)

// NotFound is the error for a query that matched none of the functions
// named: explained from coverage, or naming the closest names, as a
// Trace's queries say it. For readers that stream a trace rather than
// analyse it.
func NotFound(coverage []tracefile.Coverage, names []string, query string) *NotFoundError {
	traced := func(i int) bool { return Traced(coverage, names[i]) }
	if why, misspelt := outside(coverage, query, false); misspelt {
		return &NotFoundError{Query: query, Why: why, Near: closest(names, traced, traced, query, 3)}
	} else if why != "" {
		return &NotFoundError{Query: query, Why: why}
	}
	if slices.Contains(names, query) {
		return &NotFoundError{Query: query, Why: onlyNamed(query)}
	}
	return &NotFoundError{Query: query, Near: closest(names, traced, traced, query, 3)}
}

// closest returns up to n of names closest to query, by edit distance,
// names containing it first, those called before those not; of the names
// traced only: the table also names functions that only created or
// started goroutines (runtime.main), which no query answers for.
func closest(names []string, called, traced func(i int) bool, query string, n int) []string {
	if len(query) > maxQuery {
		return nil
	}
	type cand struct {
		name   string
		d      int
		called bool
	}
	// Names as calltrail writes them: type parameters as [...], and a
	// name without its import path is as near as one with it.
	q := strings.ToLower(typeParams.ReplaceAllString(query, "[...]"))
	var cs []cand
	for i, name := range names {
		if !traced(i) && !called(i) {
			continue
		}
		name := strings.ToLower(name)
		d := distance(q, name)
		if !strings.Contains(q, "/") {
			// Written from its package name on, or from its type or
			// its own name on: main.go's nodeToValeu is near
			// go-yaml.(*Decoder).nodeToValue.
			tail := name[strings.LastIndex(name, "/")+1:]
			d = min(d, distance(q, tail))
			for i := 0; i < len(tail); i++ {
				if tail[i] == '.' {
					d = min(d, distance(q, tail[i+1:]))
				}
			}
		}
		cs = append(cs, cand{names[i], d, called(i)})
	}
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		switch {
		case a.called != b.called:
			return a.called
		case a.d != b.d:
			return a.d < b.d
		}
		return a.name < b.name
	})
	var out []string
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

// distance is the edit distance between a and b, with b containing a
// counted as closest.
func distance(a, b string) int {
	if strings.Contains(b, a) {
		return len(b) - len(a)
	}
	const far = 1 << 20
	if len(a)*len(b) > 1<<22 {
		return far // names this long are not what anyone typed
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)] + 100 // a true substring always ranks first
}
