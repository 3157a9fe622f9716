package instrument

import (
	"bytes"
	"go/format"
	"strings"
	"testing"
)

const undoSrc = `package main

import (
	"fmt"
	"os"
)

type T struct{ n int }

func (t *T) inc() { t.n++ }

func main() {
	f := func(s string) int {
		return len(s)
	}
	fmt.Println(f("x"), os.Args)
}
`

// TestUndoAfterFormatting instruments a file, reformats it as tools do,
// and undoes: the guards, the import and the table are found and taken
// out wherever the formatter put them. What is left is the original but
// for layout (a one-line function the formatter spread over lines stays
// spread: calltrail instrument keeps the original to give back whole).
func TestUndoAfterFormatting(t *testing.T) {
	res, err := File("main.go", []byte(undoSrc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	gofmt := func(src []byte) []byte {
		out, err := format.Source(src)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// goimports moves the import into the block, sorted, in a group of
	// its own.
	goimports := func(src []byte) []byte {
		s := string(gofmt(src))
		s = strings.Replace(s, "\nimport __ct \"github.com/calltrail/calltrail\"\n", "", 1)
		s = strings.Replace(s, "\t\"os\"\n)", "\t\"os\"\n\n\t__ct \"github.com/calltrail/calltrail\"\n)", 1)
		return gofmt([]byte(s))
	}
	for name, reformat := range map[string]func([]byte) []byte{
		"as written": func(b []byte) []byte { return b },
		"gofmt":      gofmt,
		"goimports":  goimports,
		// An edit elsewhere in the file, then gofmt.
		"edited": func(b []byte) []byte {
			return gofmt(bytes.Replace(b, []byte(`fmt.Println(f("x"), os.Args)`), []byte(`fmt.Println(f("xy"), os.Args)`), 1))
		},
	} {
		instrumented := reformat(res.Src)
		if name != "as written" && bytes.Equal(instrumented, res.Src) {
			t.Fatalf("%s: the formatter changed nothing", name)
		}
		got, err := Undo(instrumented)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want := undoSrc
		if name == "edited" {
			want = strings.Replace(want, `f("x")`, `f("xy")`, 1)
		}
		if name == "as written" && string(got) != want {
			t.Errorf("%s: undo gave\n%s\nwant\n%s", name, got, want)
		}
		if !SameSource(got, []byte(want)) {
			t.Errorf("%s: undo gave\n%s\nwant, but for layout,\n%s", name, got, want)
		}
	}
}

// TestUndoRefuses leaves alone, with an error, instrumentation that was
// changed by hand.
func TestUndoRefuses(t *testing.T) {
	res, err := File("main.go", []byte(undoSrc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	formatted, _ := format.Source(res.Src)
	for name, src := range map[string][]byte{
		"guard edited": bytes.Replace(formatted, []byte("defer __ct.Exit(c)"), []byte("defer __ct.Exit(c)\n\t\t\tprintln()"), 1),
		"table gone":   formatted[:bytes.Index(formatted, []byte("var __ctf_"))],
	} {
		if _, err := Undo(src); err == nil {
			t.Errorf("%s: Undo did not refuse", name)
		}
	}
}
