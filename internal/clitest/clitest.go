// Package clitest holds what calltrail's tests that run the calltrail
// command as a user would share: the command, built once per test
// binary, and the gate of the long tests.
package clitest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	once sync.Once
	bin  string
	err  error

	dirOnce sync.Once
	dir     string
	dirErr  error
)

// Dir returns a directory that lasts as long as the test binary, for
// what its tests build once and share (Cleanup removes it).
func Dir(tb testing.TB) string {
	tb.Helper()
	dirOnce.Do(func() { dir, dirErr = os.MkdirTemp("", "calltrail-tests") })
	if dirErr != nil {
		tb.Fatal(dirErr)
	}
	return dir
}

// Binary returns the calltrail command, built from this module the
// first time a test asks for it.
//
// Under the race detector it skips the test: the command runs as a child
// process, which the detector does not watch, and the test's own work is
// the command's; the pass without the detector runs it.
func Binary(tb testing.TB) string {
	tb.Helper()
	SkipRace(tb, "runs the calltrail command as a child")
	shared := Dir(tb)
	once.Do(func() {
		path := filepath.Join(shared, "calltrail")
		out, berr := exec.Command("go", "build", "-o", path, "github.com/calltrail/calltrail/cmd/calltrail").CombinedOutput()
		if berr != nil {
			err = fmt.Errorf("%v: %s", berr, out)
		}
		bin = path
	})
	if err != nil {
		tb.Fatal(err)
	}
	return bin
}

// SkipRace skips tb under the race detector, whose work, as why says,
// runs in child processes: the detector does not watch them, and the
// pass without it runs the test.
func SkipRace(tb testing.TB, why string) {
	tb.Helper()
	if Race {
		tb.Skip(why + ", which the race detector does not watch: the pass without it runs this test")
	}
}

// Cleanup removes Dir, with the command Binary built in it, if they were
// made: for TestMain, after the tests ran.
func Cleanup() {
	if dir != "" {
		os.RemoveAll(dir)
	}
}

// Long skips t unless CALLTRAIL_LONG is set. The tests that trace whole
// programs and test suites, or read inputs of millions of goroutines,
// take minutes: gated, a package's tests stay well inside go test's
// default limit, and scripts/test.sh runs them in a pass of its own.
func Long(t testing.TB) {
	t.Helper()
	if os.Getenv("CALLTRAIL_LONG") == "" {
		t.Skip("a long test: CALLTRAIL_LONG=1 runs it, as scripts/test.sh does")
	}
}

// Fetch copies module@version from the module cache (downloading it from
// the proxy if needed) into a writable directory, and returns it and the
// module cache's copy, which is read-only.
//
// The directory is the same from one run of the tests to the next, under
// the user's cache directory, and holds the module as the cache has it
// each time: the go command's build cache keys a package outside the
// module cache by its directory, so that in a new directory every run
// would compile the module's packages again, plain and traced. The test
// holds it, locked, until it ends.
func Fetch(t testing.TB, modVersion string) (dir, cache string) {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", modVersion).Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v", modVersion, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download %s: %s", modVersion, out)
	}
	dir = filepath.Join(t.TempDir(), "mod")
	if shared, ok := sharedModDir(t, modVersion); ok {
		dir = shared
	}
	err = filepath.WalkDir(m.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(m.Dir, p)
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir, m.Dir
}

// sharedModDir returns Fetch's directory for modVersion under the user's
// cache directory, emptied and locked until t ends; ok is false where
// there is none to write to, or no lock to take, and Fetch uses one of
// the test's own.
func sharedModDir(t testing.TB, modVersion string) (dir string, ok bool) {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		return "", false
	}
	root := filepath.Join(base, "calltrail-tests", strings.NewReplacer("/", "_", "@", "_").Replace(modVersion))
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Logf("%v: copying the module into a directory of the test's own", err)
		return "", false
	}
	unlock, err := lockDir(root)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return "", false
	case err != nil:
		t.Fatal(err)
	}
	t.Cleanup(unlock)
	dir = filepath.Join(root, "mod")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	return dir, true
}
