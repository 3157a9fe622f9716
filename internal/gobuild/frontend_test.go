package gobuild

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/instrument"
)

// TestMain lets the go command run the test binary as the compiler's
// wrapper, as it runs calltrail.
func TestMain(m *testing.M) {
	ServeReportCompile()
	os.Exit(m.Run())
}

// twoPackages writes a module whose library has functions its command
// inlines, one of them keeping a value off the heap only inlined.
func twoPackages(t *testing.T) string {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/two\n\ngo 1.22\n")
	writeFile(t, filepath.Join(dir, "lib", "lib.go"), `package lib

type Point struct{ X, Y int }

// NewPoint is inlined into main, where p stays on the stack.
func NewPoint(x, y int) *Point {
	p := &Point{x, y}
	return p
}

func Sum(p *Point) int { return p.X + p.Y }

func Loop(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i
	}
	return s
}
`)
	writeFile(t, filepath.Join(dir, "cmd", "two", "main.go"), `package main

import "example.com/two/lib"

func double(x int) int { return 2 * x }

func main() { println(lib.Sum(lib.NewPoint(1, double(2))), lib.Loop(3)) }
`)
	return dir
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFrontEndReport checks that a report whose compiles end with the
// compiler's front end says what the whole compiles say, and that the
// library's compile stood on its plain one: the go command caches the
// plain package file as the report compile's output.
func TestFrontEndReport(t *testing.T) {
	// The module's directory is new: the go command compiles it anew.
	dir := twoPackages(t)
	q := InlineQuery{Dir: dir, Packages: []string{"example.com/two/lib", "example.com/two/cmd/two"}, Importers: []string{"example.com/two/cmd/two"}, Commands: []string{"example.com/two/cmd/two"}}
	defer func(was bool) { canWrap = was }(canWrap)
	canWrap = false
	whole, err := KeepInlined(q)
	if err != nil {
		t.Fatal(err)
	}
	dir2 := twoPackages(t)
	q.Dir = dir2
	canWrap = true
	front, err := KeepInlined(q)
	if err != nil {
		t.Fatal(err)
	}
	// The positions, relative to their module.
	rel := func(dir string, kept map[instrument.Pos]string) map[instrument.Pos]string {
		out := map[instrument.Pos]string{}
		for pos, why := range kept {
			pos.File, _ = filepath.Rel(dir, pos.File)
			out[pos] = why
		}
		return out
	}
	if len(whole) != 1 || !reflect.DeepEqual(rel(dir, whole), rel(dir2, front)) {
		t.Errorf("kept inlined with the front end only: %v\nwith whole compiles: %v", front, whole)
	}
	export := func(gcflags ...string) []byte {
		t.Helper()
		args := append([]string{"list", "-export", "-f", "{{.Export}}"}, gcflags...)
		cmd := exec.Command("go", append(args, "example.com/two/lib")...)
		cmd.Dir = dir2
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	// The same file but for its build ID, which the go command gave it.
	withoutID := func(data []byte) []byte {
		t.Helper()
		const mark = "\nbuild id \""
		at := bytes.Index(data, []byte(mark))
		if at < 0 {
			t.Fatal("no build ID")
		}
		id, _, _ := bytes.Cut(data[at+len(mark):], []byte(`"`))
		return bytes.ReplaceAll(data, id, bytes.Repeat([]byte("x"), len(id)))
	}
	if !bytes.Equal(withoutID(export("-gcflags=example.com/two/lib="+reportFlags+" "+backEndFlag)), withoutID(export())) {
		t.Error("the library's report compile did not stand on its plain compile")
	}
	// Cached, the report is replayed the same.
	again, err := KeepInlined(q)
	if err != nil || !reflect.DeepEqual(again, front) {
		t.Errorf("replayed: %v, %v; want %v", again, err, front)
	}
}

func TestReportCompile(t *testing.T) {
	exports := filepath.Join(t.TempDir(), "exports.json")
	data, _ := json.Marshal([]plainExport{
		{Pkg: "example.com/lib", Files: []string{"/src/lib/a.go", "/src/lib/b.go"}, Export: "/cache/lib-d"},
		{Pkg: "main", Files: []string{"/src/cmd/main.go"}, Export: "/cache/main-d"},
	})
	writeFile(t, exports, string(data))
	compile := "/go/pkg/tool/linux_amd64/compile"
	for _, tc := range []struct {
		tool, args, plain string
	}{
		{compile, "-o OUT -p example.com/lib -m " + backEndFlag + " /src/lib/b.go /src/lib/a.go", "/cache/lib-d"},
		{compile, "-o OUT -p main " + backEndFlag + " /src/cmd/main.go", "/cache/main-d"},
		{compile + ".exe", "-o OUT -p main " + backEndFlag + " /src/cmd/main.go", "/cache/main-d"},
		{compile, "-o OUT -p example.com/lib -m /src/lib/a.go /src/lib/b.go", ""},                            // not the report's
		{compile, "-o OUT -p example.com/lib " + backEndFlag + " /src/lib/a.go", ""},                         // other files
		{compile, "-o OUT -p example.com/other " + backEndFlag + " /src/lib/a.go /src/lib/b.go", ""},         // another package
		{compile, "-o OUT -p example.com/lib -asmhdr H " + backEndFlag + " /src/lib/a.go /src/lib/b.go", ""}, // writes more
		{compile, "@/tmp/args", ""},
		{compile, "-o OUT -p example.com/lib -pgoprofile=/src/default.pgo " + backEndFlag + " /src/lib/a.go /src/lib/b.go", ""}, // the main package's profile
		{"/go/pkg/tool/linux_amd64/asm", "-o OUT -p main " + backEndFlag + " /src/cmd/main.go", ""},
		{compile, "-V=full", ""},
	} {
		out, pkg, files, ok := reportArgs(tc.tool, strings.Fields(tc.args))
		plain := ""
		if ok {
			plain = plainFor(exports, pkg, files, 0)
		}
		if plain != tc.plain || plain != "" && out != "OUT" {
			t.Errorf("%s %s: output %q from %q, want OUT from %q", filepath.Base(tc.tool), tc.args, out, plain, tc.plain)
		}
	}
}

func TestQuoteArg(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/bin/calltrail":  "/usr/bin/calltrail",
		"/my dir/calltrail":   "'/my dir/calltrail'",
		"/it's/calltrail":     `"/it's/calltrail"`,
		`/it's "x"/calltrail`: "",
	} {
		if got := quoteArg(in); got != want {
			t.Errorf("quoteArg(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPlainForWaits: the plain package files are listed beside the
// compiles; a compile whose back end starts first waits for the list.
func TestPlainForWaits(t *testing.T) {
	exports := filepath.Join(t.TempDir(), "exports.json")
	writeFile(t, exports, "") // as keepInlined makes it, before the list
	files := []string{"/src/lib/a.go"}
	if got := plainFor(exports, "example.com/lib", files, 0); got != "" {
		t.Errorf("before the list: %q", got)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		data, _ := json.Marshal([]plainExport{{Pkg: "example.com/lib", Files: files, Export: "/cache/lib-d"}})
		plainExportsWrite(t, exports, data)
	}()
	if got := plainFor(exports, "example.com/lib", files, time.Minute); got != "/cache/lib-d" {
		t.Errorf("after the list: %q, want /cache/lib-d", got)
	}
	if got := plainFor(exports, "example.com/other", files, time.Minute); got != "" {
		t.Errorf("a package not listed: %q", got)
	}
}

// plainExportsWrite writes the list as plainExports does: whole at once.
func plainExportsWrite(t *testing.T, exports string, data []byte) {
	if err := os.WriteFile(exports+".tmp", data, 0o644); err != nil {
		t.Error(err)
	}
	if err := os.Rename(exports+".tmp", exports); err != nil {
		t.Error(err)
	}
}
