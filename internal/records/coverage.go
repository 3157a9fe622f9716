package records

// Coverage says what calltrail's build traced of one package of the
// program, and what it left out and why, so that a question about a
// function outside the trace can be answered with the reason instead of
// "no function". The build encodes it (tracewrite.AppendCoverage) into
// the package; the runtime writes it to the trace as it is.
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
