package tracefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenErrors: Open and ReadFile say in one line, naming the file,
// what is wrong; ReadFile refuses an endless input from its first bytes.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("hello, not a trace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory, as calltrail test -o before.trace makes one: the
	// traces in it are named.
	tests := filepath.Join(dir, "before.trace")
	os.Mkdir(tests, 0o755)
	os.WriteFile(filepath.Join(tests, "pkg.test.trace"), nil, 0o644)
	inputs := []struct{ name, want string }{
		{filepath.Join(dir, "absent.out"), "absent.out: no such trace file (record one with CALLTRAIL_OUT="},
		{text, "notes.txt: not a calltrail trace"},
		{dir, "is a directory, not a trace file"},
		{tests, "before.trace is a directory, not a trace file; the traces in it: " + filepath.Join(tests, "pkg.test.trace")},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		inputs = append(inputs, struct{ name, want string }{"/dev/zero", "/dev/zero: not a calltrail trace"})
	}
	for _, in := range inputs {
		f, err := Open(in.name)
		if err == nil {
			f.Close()
		}
		_, rerr := ReadFile(in.name)
		for _, e := range []error{err, rerr} {
			if e == nil || !strings.Contains(e.Error(), in.want) || strings.Contains(e.Error(), "\n") {
				t.Errorf("%s: %v, want one line containing %q", in.name, e, in.want)
			}
		}
	}
	f, err := Open(filepath.Join("testdata", "sample.trace"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() == 0 || f.NumFuncs() < 0 {
		t.Errorf("sample.trace: %v, %v", fi, err)
	}
}
