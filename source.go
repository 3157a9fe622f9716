package calltrail

import (
	"embed"
	"io/fs"
)

// source holds this package's own source and that of the packages it
// imports, for "calltrail build" to compile into programs whose module
// does not depend on calltrail. Programs that do not call Source do not
// carry it: the linker drops unreferenced data.
//
//go:embed *.go *.s tracefile/*.go internal/endpoint/*.go internal/profhook/*.go profiles/*.go internal/wire/*.go internal/records/*.go internal/tracewrite/*.go internal/tracewrite/*.s live/*.go internal/indented/*.go internal/gstate/*.go internal/gstate/*.s internal/clock/*.go internal/clock/*.s internal/ring/*.go internal/gtable/*.go internal/httpguard/*.go internal/traceout/*.go
var source embed.FS

// Source returns the source files of the runtime and the packages it
// imports, test files and this file excepted, with paths relative to the
// module root.
//
// For the calltrail command: programs need not call it (see the package
// documentation).
func Source() fs.FS {
	return sourceFS{source}
}

type sourceFS struct{ embed.FS }

// ReadDir hides test files and this file.
func (s sourceFS) ReadDir(name string) ([]fs.DirEntry, error) {
	all, err := s.FS.ReadDir(name)
	var keep []fs.DirEntry
	for _, e := range all {
		if n := e.Name(); len(n) > 8 && n[len(n)-8:] == "_test.go" || name == "." && n == "source.go" {
			continue
		}
		keep = append(keep, e)
	}
	return keep, err
}
