package tracetest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/calltrail/calltrail/tracefile"
)

// Golden compares got with the file testdata/name, after writing got to
// it when update is set (the tests' -update flag).
func Golden(t testing.TB, name, got string, update bool) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// Read builds the trace of script (see Build) and returns a reader of
// it, past its header; it fails tb on a bad script.
func Read(tb testing.TB, script string) *tracefile.Reader {
	tb.Helper()
	data, err := Build(script)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	return r
}
