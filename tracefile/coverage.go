package tracefile

import (
	"fmt"
)

// Coverage says what calltrail's build traced of one package of the
// program, and what it left out and why, so that a question about a
// function outside the trace can be answered with the reason instead of
// "no function". The build encodes it (AppendCoverage) into the package;
// the runtime writes it to the trace as it is.
type Coverage struct {
	Package string   // import path
	Traced  []string // the functions instrumented, as Go's runtime names them
	Omitted []Omitted
	// Untraced lists packages of the program that were not instrumented
	// at all, for the packages the build was asked for.
	Untraced []Untraced
}

// Omitted is a function of an instrumented package left untraced.
type Omitted struct {
	Name   string // as Go's runtime names it
	File   string
	Line   int
	Why    string // the reason, as calltrail's instrument package words it
	Detail string // more: the compiler's line for a function kept inlined
}

// The reasons a function of an instrumented package is left untraced,
// as an Omitted's Why says them.
const (
	WhyInlined   = "kept inlined" // to keep a value off the heap
	WhyFuncs     = "not matched by --funcs"
	WhyExclude   = "matched by --exclude"
	WhyIgnored   = "marked //calltrail:ignore"
	WhyNosplit   = "marked //go:nosplit"
	WhyGenerated = "in a generated file"
	WhyNoBody    = "declared without a body (assembly or linkname)"
)

// Untraced is a package of the program that was not instrumented.
type Untraced struct {
	Path string
	Why  string
}

// readCoverage decodes a coverage chunk's payload.
func readCoverage(d *dec) (Coverage, error) {
	c := Coverage{Package: d.string()}
	// Every entry takes at least a byte: a count beyond the bytes left
	// is damage, not a reason to allocate.
	count := func() int {
		n := d.uvarint()
		if d.err == nil && n > uint64(len(d.p)) {
			d.err = fmt.Errorf("%w: coverage count %d beyond its chunk", ErrCorrupt, n)
		}
		return int(n)
	}
	n := count()
	for i := 0; i < n && d.err == nil; i++ {
		c.Traced = append(c.Traced, d.string())
	}
	n = count()
	for i := 0; i < n && d.err == nil; i++ {
		o := Omitted{Name: d.string(), File: d.string()}
		o.Line = int(d.uvarint() & (1<<31 - 1))
		o.Why, o.Detail = d.string(), d.string()
		c.Omitted = append(c.Omitted, o)
	}
	n = count()
	for i := 0; i < n && d.err == nil; i++ {
		c.Untraced = append(c.Untraced, Untraced{Path: d.string(), Why: d.string()})
	}
	return c, d.finish("coverage")
}

// Coverage returns what the build traced of each package that says so,
// read so far: empty for a program instrumented in its source, or built
// before traces said what they cover.
func (rd *Reader) Coverage() []Coverage { return rd.coverage }
