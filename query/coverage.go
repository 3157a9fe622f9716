package query

import (
	"fmt"
	"slices"
	"strings"

	"github.com/calltrail/calltrail/tracefile"
)

// Outside explains why the function named name has no calls in the
// trace, in one line (see Outside).
func (t *Trace) Outside(name string) string {
	why, _ := outside(t.Profile.Coverage, name, t.Profile.Err != nil)
	return why
}

// Outside explains why the function named name has no calls in a trace
// of the given coverage, in one line, from what the build said it
// traced: left out (and how to trace it), traced but never called, or in
// a package that was not instrumented. It returns "" when the coverage
// does not say: a name in no package the build knew of, or a trace
// without coverage. A generic function may be named without its "[...]",
// as go doc names it, and a function without its package, when no other
// function the build knew of has that name.
func Outside(coverage []tracefile.Coverage, name string) string {
	why, _ := outside(coverage, name, false)
	return why
}

// outside is Outside, of a trace read only in part when cut is set: a
// traced function may then have been called in the part not read.
// misspelt is set when the name is in a package the build traced and
// names none of its functions: closest names are worth giving.
func outside(coverage []tracefile.Coverage, name string, cut bool) (why string, misspelt bool) {
	if full, ok := known(coverage, name); ok {
		name = full
	}
	pkg, path, untraced := "", "", ""
	for _, c := range coverage {
		for _, o := range c.Omitted {
			if o.Name == name {
				return omitted(name, o.Why, o.Detail, fmt.Sprintf("%s:%d", o.File, o.Line), o.File), false
			}
		}
		prefix := c.Package
		for _, f := range c.Traced {
			if f == name && cut {
				return fmt.Sprintf("%s is traced, but has no calls in the part of the trace that could be read", name), false
			}
			if f == name {
				return fmt.Sprintf("%s is traced, but was not called in this run", name), false
			}
			if strings.HasPrefix(f, "main.") {
				prefix = "main" // Go names the functions of a command main.*
			}
		}
		if len(prefix) > len(pkg) && strings.HasPrefix(name, prefix+".") {
			pkg = prefix
		}
		for _, u := range c.Untraced {
			if len(u.Path) > len(path) && strings.HasPrefix(name, u.Path+".") {
				path, untraced = u.Path, u.Why
			}
		}
	}
	switch {
	case path != "" && len(path) > len(pkg):
		return fmt.Sprintf("%s is not traced: package %s was not instrumented (%s)", name, path, untraced), false
	case pkg != "":
		return fmt.Sprintf("%s is not in the trace: package %s was instrumented, and has no function of that name", name, pkg), true
	}
	return "", false
}

// Traced reports whether the build traced the function named name, as
// the coverage says; true for a trace without coverage, which does not
// say. A function can be in a trace's table untraced: a goroutine's
// creator or first function (runtime.main, testing.(*T).Run).
func Traced(coverage []tracefile.Coverage, name string) bool {
	if len(coverage) == 0 {
		return true
	}
	for _, c := range coverage {
		if slices.Contains(c.Traced, name) {
			return true
		}
	}
	return false
}

// fullName reports whether the build that made coverage named a function
// name exactly, traced or left out.
func fullName(coverage []tracefile.Coverage, name string) bool {
	for _, c := range coverage {
		if slices.ContainsFunc(c.Omitted, func(o tracefile.Omitted) bool { return o.Name == name }) || slices.Contains(c.Traced, name) {
			return true
		}
	}
	return false
}

// known returns the full name of the function of the coverage that name
// names, when it names one but not exactly: a generic function without
// its "[...]", or a function without its package path (pkg.F, F,
// (*T).M), if no other function the coverage lists has that name.
func known(coverage []tracefile.Coverage, name string) (string, bool) {
	// Type arguments as Go writes them, lo.Map[int, string], are the
	// [...] calltrail writes.
	asked := name
	name = typeParams.ReplaceAllString(name, "[...]")
	var found []string
	exact := false
	match := func(full string) {
		if full == name {
			exact = true
			return
		}
		// A generic function by its go doc name, or with its "[...]".
		for _, f := range []string{strings.TrimSuffix(full, "[...]"), full} {
			if f == name || strings.HasSuffix(f, "."+name) || strings.HasSuffix(f, "/"+name) {
				found = append(found, full)
				break
			}
		}
	}
	for _, c := range coverage {
		for _, o := range c.Omitted {
			match(o.Name)
		}
		for _, f := range c.Traced {
			match(f)
		}
	}
	if exact {
		return name, name != asked
	}
	if len(found) == 1 {
		return found[0], true
	}
	// A generic function by its go doc name is the one, whatever else
	// shares its short name.
	for _, f := range found {
		if f == name+"[...]" {
			return f, true
		}
	}
	return "", false
}

// omitted explains a function the build left untraced, and how to trace
// it: why and detail are the coverage's, at the function's place.
func omitted(name, why, detail, at, file string) string {
	switch why {
	case tracefile.WhyInlined:
		return fmt.Sprintf("%s is not traced: kept inlined, so that a value stays off the heap (%s); --inlined traces it, at the cost of that allocation", name, detail)
	case tracefile.WhyFuncs:
		return fmt.Sprintf("%s is not traced: not matched by --funcs; a --funcs that matches it traces it", name)
	case tracefile.WhyExclude:
		return fmt.Sprintf("%s is not traced: matched by --exclude; an --exclude that does not match it traces it", name)
	case tracefile.WhyIgnored:
		return fmt.Sprintf("%s is not traced: marked //calltrail:ignore (%s); without the mark it is traced", name, at)
	case tracefile.WhyNosplit:
		return fmt.Sprintf("%s is not traced: marked //go:nosplit (%s), so it cannot call the tracer; its callers are traced", name, at)
	case tracefile.WhyGenerated:
		return fmt.Sprintf("%s is not traced: %s is a generated file (\"Code generated ... DO NOT EDIT.\"), which calltrail leaves alone", name, file)
	case tracefile.WhyNoBody:
		return fmt.Sprintf("%s is not traced: declared without a Go body (%s): assembly or linkname, which calltrail cannot instrument", name, at)
	}
	return fmt.Sprintf("%s is not traced: %s (%s)", name, why, at)
}
