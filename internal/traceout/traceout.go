package traceout

import (
	"os"
	"strings"
)

// IsDir reports whether the trace path name names a directory to write
// the trace in, named after the program, rather than the trace itself:
// it ends in a separator, or is a directory.
func IsDir(name string) bool {
	if strings.HasSuffix(name, string(os.PathSeparator)) || strings.HasSuffix(name, "/") {
		return true
	}
	info, err := os.Stat(name)
	return err == nil && info.IsDir()
}
