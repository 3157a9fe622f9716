package traceout

import (
	"os"
	"path/filepath"
	"testing"
)

func TestIsDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x.trace")
	os.WriteFile(file, nil, 0o644)
	for name, want := range map[string]bool{
		dir:                                   true,
		dir + "/":                             true,
		filepath.Join(dir, "new") + "/":       true,
		file:                                  false,
		filepath.Join(dir, "absent.trace"):    false,
		filepath.Join(dir, "absent", "a.out"): false,
	} {
		if got := IsDir(name); got != want {
			t.Errorf("IsDir(%q) = %v, want %v", name, got, want)
		}
	}
}
