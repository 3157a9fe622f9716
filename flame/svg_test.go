package flame

import (
	"bytes"
	"encoding/xml"
	"strconv"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/tracefile"
)

func graph(t *testing.T, data []byte) *query.Tree {
	t.Helper()
	r, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return query.FlameGraph(analysis.Analyze(r, analysis.Options{}), false, query.Wall)
}

// TestSVG draws a small graph: well-formed SVG, a box per chain with its
// tooltip, in the colours of the web page.
func TestSVG(t *testing.T) {
	data, err := tracetest.Build("1 +main.main 0\n1 +main.A 10\n1 - 40\n1 +main.B 50\n1 - 60\n1 - 100")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSVG(&buf, graph(t, data), Options{Title: "a <title>"}); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	d := xml.NewDecoder(strings.NewReader(s))
	rects := 0
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed: %v", err)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			rects++
		}
	}
	if rects != 5 { // the background, all, main.main, main.A, main.B
		t.Errorf("%d rects, want 5", rects)
	}
	for _, want := range []string{"main.A: 30ns (30.00%)", Colour("main.B"), "a &lt;title&gt;"} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

// TestSVGDeep draws a 30,000-deep recursion: MaxLevels rows at most.
func TestSVGDeep(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSVG(&buf, graph(t, tracetest.Recursion(30_000)), Options{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "<rect"); n > MaxLevels+1 {
		t.Errorf("%d boxes, want at most %d levels", n, MaxLevels)
	}
}

// TestSVGDiffNests draws a graph against a base trace in which main.A
// took most of main.main, and main.B did not run: boxes are as wide as
// the trace drawn says, as the web page draws them, so none outgrows its
// parent or the canvas.
func TestSVGDiffNests(t *testing.T) {
	trace := func(script string) *query.Trace {
		return query.New("t", analysis.Analyze(tracetest.Read(t, script), analysis.Options{}))
	}
	base := trace("1 +main.main 0\n1 +main.A 10\n1 - 90\n1 - 100")
	cur := trace("1 +main.main 0\n1 +main.A 10\n1 - 20\n1 +main.B 30\n1 - 90\n1 - 100")
	var buf bytes.Buffer
	if err := WriteSVG(&buf, cur.Flame(base, false, query.Wall), Options{Width: 1000}); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "rect" {
			continue
		}
		var x, w float64
		for _, a := range se.Attr {
			switch a.Name.Local {
			case "x":
				x, _ = strconv.ParseFloat(a.Value, 64)
			case "width":
				w, _ = strconv.ParseFloat(a.Value, 64)
			}
		}
		if x+w > 990.1 {
			t.Errorf("a box from %.1f to %.1f, past the graph's right edge at 990", x, x+w)
		}
	}
	if !strings.Contains(svg, "main.A: 10ns (10.00%), base 80ns (-70ns)") {
		t.Errorf("main.A's tooltip: want its value, its base and the change:\n%s", svg)
	}
}

// TestDiffColour: red for slower, blue for faster, grey for the same.
func TestDiffColour(t *testing.T) {
	for _, tc := range []struct {
		v, b int64
		want string
	}{{200, 100, "hsl(0,"}, {100, 200, "hsl(215,"}, {100, 100, "#c8c8c8"}} {
		if got := DiffColour(tc.v, tc.b, 1000); !strings.HasPrefix(got, tc.want) {
			t.Errorf("DiffColour(%d, %d) = %s, want %s...", tc.v, tc.b, got, tc.want)
		}
	}
}
