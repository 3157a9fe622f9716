//go:build unix

package main

import (
	"encoding/json"
	"errors"
	"github.com/calltrail/calltrail/internal/clitest"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/tracefile"
)

// TestProfilesLinked: calltrail's runtime does not import runtime/pprof
// (see gobuild's TestRuntimeDeps), so that a traced build need not compile
// it, or not before everything else; package profiles brings the Go
// runtime's profiles instead.
// calltrail run and test link it into every program they trace (a
// module's command, files named on the command line, a package's tests)
// unless --profiles none; calltrail build with --profiles, which also
// sets the profiles the program records by default. A program without it
// says it has none when asked for them; one instrumented in its source
// has them once it imports the package.
func TestProfilesLinked(t *testing.T) {
	// The build's own goroutines run under the detector in TestBuild.
	clitest.SkipRace(t, "builds programs in several variants with go build and the linker, as children")
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"block", "cpu", "mutex"}

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":          "module example.com/prof\n\ngo 1.22\n",
		"main.go":         "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/prof/lib\"\n)\n\nfunc main() { fmt.Println(lib.Spin(1 << 20)) }\n",
		"lib/lib.go":      "package lib\n\n// Spin sums the first n squares.\nfunc Spin(n int) int {\n\ts := 0\n\tfor i := range n {\n\t\ts += i * i\n\t}\n\treturn s\n}\n",
		"lib/lib_test.go": "package lib\n\nimport \"testing\"\n\nfunc TestSpin(t *testing.T) {\n\tif Spin(3) != 5 {\n\t\tt.Fatal(Spin(3))\n\t}\n}\n",
	})
	chdir(t, dir)
	for _, c := range []struct {
		args  []string
		trace string
	}{
		{[]string{"run", "-o", "module.out", "."}, "module.out"},
		{[]string{"run", "-o", "files.out", "main.go"}, "files.out"},
		{[]string{"test", "-o", "traces", "./lib"}, filepath.Join("traces", "lib.test.trace")},
	} {
		code, _, stderr := runCmd(c.args...)
		if code != 0 {
			t.Fatalf("calltrail %s: exit %d\n%s", strings.Join(c.args, " "), code, stderr)
		}
		if strings.Contains(stderr, "built without") {
			t.Errorf("calltrail %s: %s", strings.Join(c.args, " "), stderr)
		}
		if got := profileNames(t, c.trace); !slices.Equal(got, all) {
			t.Errorf("calltrail %s: profiles %q, want %q", strings.Join(c.args, " "), got, all)
		}
	}

	if code, _, stderr := runCmd("run", "--profiles", "none", "-o", "none.out", "."); code != 0 || strings.Contains(stderr, "built without") {
		t.Errorf("calltrail run --profiles none: exit %d\n%s", code, stderr)
	} else if got := profileNames(t, "none.out"); got != nil {
		t.Errorf("calltrail run --profiles none: profiles %q", got)
	}

	// calltrail build links the profiles when asked, and the program
	// then records them unless told otherwise.
	for _, c := range []struct {
		flags   []string
		env     string // CALLTRAIL_PROFILES, if set
		want    []string
		pprof   bool // the binary links runtime/pprof
		without bool // the program says it was built without profiles
	}{
		{nil, "cpu", nil, false, true},
		{nil, "", nil, false, false},
		{[]string{"--profiles", "cpu,block"}, "", []string{"block", "cpu"}, true, false},
		{[]string{"--profiles", "cpu,block"}, "none", nil, true, false},
		{[]string{"--profiles", "cpu,block"}, "mutex", []string{"mutex"}, true, false},
	} {
		bin := filepath.Join(dir, "prof")
		if code, _, stderr := runCmd(append(append([]string{"build", "-o", bin}, c.flags...), ".")...); code != 0 {
			t.Fatalf("calltrail build %q: exit %d\n%s", c.flags, code, stderr)
		}
		nm, err := exec.Command("go", "tool", "nm", bin).Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(nm), " runtime/pprof.StartCPUProfile"); got != c.pprof {
			t.Errorf("calltrail build %q: the program links runtime/pprof: %v", c.flags, got)
		}
		trace := filepath.Join(dir, "built.out")
		run := exec.Command(bin)
		run.Env = append(os.Environ(), "CALLTRAIL_OUT="+trace)
		if c.env != "" {
			run.Env = append(run.Env, "CALLTRAIL_PROFILES="+c.env)
		}
		var stderr strings.Builder
		run.Stderr = &stderr
		if err := run.Run(); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		if got := strings.Contains(stderr.String(), "built without the Go runtime's profiles (calltrail build --profiles "+c.env+" links them"); got != c.without {
			t.Errorf("calltrail build %q, CALLTRAIL_PROFILES=%s: stderr %q", c.flags, c.env, stderr.String())
		}
		if got := profileNames(t, trace); !slices.Equal(got, c.want) {
			t.Errorf("calltrail build %q, CALLTRAIL_PROFILES=%s: profiles %q, want %q", c.flags, c.env, got, c.want)
		}
	}

	// Files named on the command line take the control endpoint too.
	bin := filepath.Join(dir, "files")
	if code, _, stderr := runCmd("build", "--live", "-o", bin, "main.go"); code != 0 {
		t.Fatalf("calltrail build --live main.go: exit %d\n%s", code, stderr)
	}
	if nm, err := exec.Command("go", "tool", "nm", bin).Output(); err != nil || !strings.Contains(string(nm), " github.com/calltrail/calltrail/live..inittask") {
		t.Errorf("calltrail build --live main.go: the program does not link package live (%v)", err)
	}

	// examples/callchains is traced in its source: built with the
	// calltrail tag, without package profiles, then with a file that
	// imports it, through an overlay.
	bin = filepath.Join(dir, "callchains")
	linked := filepath.Join(dir, "linked.go")
	os.WriteFile(linked, []byte("package main\n\nimport _ \"github.com/calltrail/calltrail/profiles\"\n"), 0o644)
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(repo, "examples", "callchains", "linked.go"): linked}})
	os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644)
	for _, c := range []struct {
		flags []string
		want  []string
	}{
		{nil, nil},
		{[]string{"-overlay", filepath.Join(dir, "overlay.json")}, []string{"cpu"}},
	} {
		build := exec.Command("go", append(append([]string{"build", "-tags", "calltrail", "-o", bin}, c.flags...), "./examples/callchains")...)
		build.Dir = repo
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %q: %v\n%s", c.flags, err, out)
		}
		trace := filepath.Join(dir, "callchains.out")
		run := exec.Command(bin)
		run.Env = append(os.Environ(), "CALLTRAIL_OUT="+trace, "CALLTRAIL_PROFILES=cpu")
		var stderr strings.Builder
		run.Stderr = &stderr
		if err := run.Run(); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		note := strings.Contains(stderr.String(), "CALLTRAIL_PROFILES=cpu: this program was built without the Go runtime's profiles")
		if note != (c.want == nil) {
			t.Errorf("go build %q: stderr %q", c.flags, stderr.String())
		}
		if got := profileNames(t, trace); !slices.Equal(got, c.want) {
			t.Errorf("go build %q: profiles %q, want %q", c.flags, got, c.want)
		}
	}
}

// profileNames returns the names of the Go runtime's profiles in the
// trace at path, sorted.
func profileNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := tracefile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ev tracefile.Event
	for {
		if err := f.Reader.Read(&ev); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("%s: %v", path, err)
			}
			break
		}
	}
	var names []string
	for name := range f.Reader.Profiles() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
