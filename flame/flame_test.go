package flame

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"regexp"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/tracefile"
)

// profile analyses main(0..100) -> a(10..40) -> b(20..30); main -> b(50..60).
func profile(t *testing.T, slower bool) *analysis.Profile {
	var buf bytes.Buffer
	e, _ := tracefile.NewEncoder(&buf, nil)
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main"}, {Name: "a"}, {Name: "b"}})
	var b tracefile.Batch
	b.Enter(1, 1, 0)
	b.Enter(1, 2, 10)
	b.Enter(1, 3, 20)
	b.Exit(1, tracefile.Return, 30)
	b.Exit(1, tracefile.Return, 40)
	b.Enter(1, 3, 50)
	end := int64(60)
	if slower {
		end = 90
	}
	b.Exit(1, tracefile.Return, end)
	b.Exit(1, tracefile.Return, 100)
	e.Clock(100, 100)
	e.Events(&b)
	e.Flush()
	r, err := tracefile.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return analysis.Analyze(r, analysis.Options{})
}

// flat renders a tree as "name=value(children)".
func flat(f *Frame) string {
	s := f.Name + "=" + itoa(f.Value)
	if f.Base != 0 {
		s += "/" + itoa(f.Base)
	}
	if len(f.Children) > 0 {
		var cs []string
		for _, c := range f.Children {
			cs = append(cs, flat(c))
		}
		s += "(" + strings.Join(cs, " ") + ")"
	}
	return s
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestFromProfile(t *testing.T) {
	p := profile(t, false)
	if got, want := flat(FromProfile(p, false)), "all=100(main=100(a=30(b=10) b=10))"; got != want {
		t.Errorf("total: %s, want %s", got, want)
	}
	// Inverted: self time where it was spent, callers above.
	if got, want := flat(FromProfile(p, true)), "all=100(a=20(main=20) b=20(a=10(main=10) main=10) main=60)"; got != want {
		t.Errorf("self: %s, want %s", got, want)
	}
	cur := FromProfile(profile(t, true), false)
	cur.Diff(FromProfile(p, false))
	if got, want := flat(cur), "all=100/100(main=100/100(a=30/30(b=10/10) b=40/10))"; got != want {
		t.Errorf("diff: %s, want %s", got, want)
	}
}

func TestWrite(t *testing.T) {
	root := FromProfile(profile(t, false), false)
	var svg bytes.Buffer
	if err := WriteSVG(&svg, root, Options{Title: "t <&>"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		G []struct {
			Title string `xml:"title"`
		} `xml:"g"`
	}
	if err := xml.Unmarshal(svg.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	if len(doc.G) != 5 || !strings.HasPrefix(doc.G[1].Title, "main: 100ns (100.00%)") {
		t.Errorf("%d boxes, first %+v", len(doc.G), doc.G)
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, root, Options{Title: "t"}); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`const root = (.*);`).FindSubmatch(page.Bytes())
	var back Frame
	if m == nil || json.Unmarshal(m[1], &back) != nil || flat(&back) != flat(root) {
		t.Errorf("the page does not carry the graph:\n%s", page.String()[:300])
	}
	if bytes.Contains(page.Bytes(), []byte("http://")) || bytes.Contains(page.Bytes(), []byte("https://")) {
		t.Error("the page refers to the network")
	}
}

func TestFromProfileBy(t *testing.T) {
	p := profile(t, false)
	// CPU time by chain, as a CPU profile would give it: main 50, of
	// which a 25 (b below it 10) and main's b 0.
	cpu := map[string]int64{"main": 50, "main a": 25, "main a b": 10, "main b": 0}
	p.Walk(func(n *analysis.Node) {
		var names []string
		for _, id := range n.Path() {
			names = append(names, p.Names(id))
		}
		n.CPU = cpu[strings.Join(names, " ")]
		n.Wait = n.Total - n.CPU
	})
	tests := []struct {
		w        Weight
		inverted bool
		want     string
	}{
		{CPU, false, "all=50(main=50(a=25(b=10)))"},
		{CPU, true, "all=50(a=15(main=15) b=10(a=10(main=10)) main=25)"},
		// Off CPU: main 50, a 5, a's b 0, main's b 10.
		{Wait, false, "all=50(main=50(a=5 b=10))"},
		{Wait, true, "all=50(a=5(main=5) b=10(main=10) main=35)"},
	}
	for _, tt := range tests {
		if got := flat(FromProfileBy(p, tt.inverted, tt.w)); got != tt.want {
			t.Errorf("weight %d inverted %v: %s, want %s", tt.w, tt.inverted, got, tt.want)
		}
	}
}

func TestFit(t *testing.T) {
	// Sampled off-CPU time can leave a caller below its callees.
	f := &Frame{Name: "all", Value: 5, Children: []*Frame{{Name: "a", Value: 3}, {Name: "b", Value: 4}}}
	fit(f)
	if got, want := flat(f), "all=7(a=3 b=4)"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
