package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
	"github.com/google/pprof/profile"
)

var update = flag.Bool("update", false, "rewrite golden files")

// script is main.main calling main.A twice, the second time through
// main.B, which panics, and held up 40ns by the trace writer between; and
// goroutine 2, started by main.main, running main.worker, which calls
// main.B.
const script = `
1 +main.main 0
1 +main.A 100
1 - 1100
1 held 1100 1140
2 go 1 main.main 1150
2 +main.worker 1200
2 +main.B 1300
1 +main.A 2000
1 +main.B 2100
1 ! 52100
1 ! 52200
2 - 60000
2 - 61000
1 - 90000
`

func reader(t *testing.T, data []byte) *tracefile.Reader {
	t.Helper()
	r, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func analyse(t *testing.T, data []byte) *analysis.Profile {
	t.Helper()
	p := analysis.Analyze(reader(t, data), analysis.Options{ByGoroutine: true})
	if p.Err != nil {
		t.Fatal(p.Err)
	}
	return p
}

// pprofOf exports the trace data as pprof and reads it back with pprof's
// own parser, checking it valid.
func pprofOf(t *testing.T, data []byte) *profile.Profile {
	t.Helper()
	var buf bytes.Buffer
	if _, err := Pprof(&buf, analyse(t, data)); err != nil {
		t.Fatal(err)
	}
	prof, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := prof.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return prof
}

// TestFormats writes every format of one trace and compares it with its
// golden file.
func TestFormats(t *testing.T) {
	data, err := tracetest.Build(script)
	if err != nil {
		t.Fatal(err)
	}
	var folded, chrome, speedscope bytes.Buffer
	if _, err := Folded(&folded, analyse(t, data)); err != nil {
		t.Fatal(err)
	}
	if _, err := Chrome(&chrome, reader(t, data), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Speedscope(&speedscope, reader(t, data), &filter.Filter{}); err != nil {
		t.Fatal(err)
	}
	tracetest.Golden(t, "folded.golden", folded.String(), *update)
	tracetest.Golden(t, "chrome.golden", chrome.String(), *update)
	tracetest.Golden(t, "speedscope.golden", speedscope.String(), *update)
	for name, b := range map[string][]byte{"chrome": chrome.Bytes(), "speedscope": speedscope.Bytes()} {
		if !json.Valid(b) {
			t.Errorf("%s: not valid JSON", name)
		}
	}
}

// TestPprof reads the pprof export back with pprof's own parser: a valid
// profile whose self times add up to the folded stacks', labelled by
// goroutine.
func TestPprof(t *testing.T) {
	data, err := tracetest.Build(script)
	if err != nil {
		t.Fatal(err)
	}
	prof := pprofOf(t, data)
	var calls, wall int64
	goroutines := map[int64]bool{}
	for _, s := range prof.Sample {
		calls += s.Value[0]
		wall += s.Value[1]
		for _, g := range s.NumLabel["goroutine"] {
			goroutines[g] = true
		}
	}
	// main.main 90µs on g1, less 40ns held up by the trace writer, and
	// main.worker 59.8µs on g2, unfinished calls excepted: all are
	// finished here.
	if want := int64(90000 - 40 + 59800); calls != 6 || wall != want {
		t.Errorf("pprof: %d calls, %d ns; want 6 calls, %d ns", calls, wall, want)
	}
	if len(goroutines) != 2 {
		t.Errorf("samples labelled with goroutines %v, want 2", goroutines)
	}
}

// TestDeepStacksCut exports a recursion deeper than MaxStack: the stack
// formats keep the innermost MaxStack calls and count the chains cut; the
// time-ordered ones leave out the calls nested deeper and count them.
func TestDeepStacksCut(t *testing.T) {
	const depth = 1000
	data := tracetest.Recursion(depth)
	p := analyse(t, data)
	var folded bytes.Buffer
	cut, err := Folded(&folded, p)
	if err != nil {
		t.Fatal(err)
	}
	if cut == 0 {
		t.Error("Folded cut no chain of a 1000-deep recursion")
	}
	var total int64
	for _, line := range strings.Split(strings.TrimSpace(folded.String()), "\n") {
		stack, ns, _ := strings.Cut(line, " ")
		if n := strings.Count(stack, ";") + 1; n > MaxStack {
			t.Fatalf("folded stack of %d frames", n)
		}
		v, _ := strconv.ParseInt(ns, 10, 64)
		total += v
	}
	var want int64
	for _, c := range p.Root.Children {
		want += c.Total
	}
	if total != want {
		t.Errorf("folded stacks add up to %d ns, the trace to %d", total, want)
	}
	prof, pcut := Profile(p)
	if pcut != cut {
		t.Errorf("pprof cut %d chains, folded %d", pcut, cut)
	}
	for _, s := range prof.Sample {
		if len(s.Location) > MaxStack {
			t.Fatalf("pprof sample of %d locations", len(s.Location))
		}
	}
	var chrome bytes.Buffer
	left, err := Chrome(&chrome, reader(t, data), nil)
	if err != nil {
		t.Fatal(err)
	}
	// main.main, depth calls of main.rec and main.leaf: depth+2 calls.
	if kept := strings.Count(chrome.String(), `"ph":"X"`); kept != MaxStack || left != depth+2-MaxStack {
		t.Errorf("chrome kept %d calls and left out %d; want %d and %d", kept, left, MaxStack, depth+2-MaxStack)
	}
}

// TestTooManyCalls: past the limit, the timeline formats stop reading and
// write nothing: the calls after the limit are not read.
func TestTooManyCalls(t *testing.T) {
	defer func(n uint64) { maxCalls = n }(maxCalls)
	maxCalls = 10
	data := tracetest.Recursion(40) // main.main, main.rec ×40 and main.leaf
	for _, export := range []func(io.Writer, *tracefile.Reader, *filter.Filter) (int, error){Chrome, Speedscope} {
		var out bytes.Buffer
		r := reader(t, data)
		_, err := export(&out, r, nil)
		var big *ErrTooBig
		if !errors.As(err, &big) || big.Limit != 10 || out.Len() != 0 {
			t.Errorf("err %v, %d bytes written; want more than 10 calls too many, nothing written", err, out.Len())
		}
		var ev tracefile.Event
		if r.Read(&ev) != nil {
			t.Errorf("the export read the whole trace, past the limit")
		}
	}
}

// TestEndsAreNotFailures: a call that returned io.EOF ended, it did not
// fail, as report counts it: the pprof export's errors sample type
// counts only the failed call, and the Chrome export marks only that one
// an error, giving the other its end.
func TestEndsAreNotFailures(t *testing.T) {
	data, err := tracetest.Build(`
1 +main.main 0
1 +main.read 10
1 -EOF 20
1 +main.read 30
1 -boom 40
1 - 50
`)
	if err != nil {
		t.Fatal(err)
	}
	prof := pprofOf(t, data)
	var failed int64
	for _, s := range prof.Sample {
		failed += s.Value[2]
		if s.Value[2] != 0 && !strings.Contains(strings.Join(s.Label["error"], ""), "boom") {
			t.Errorf("an errors sample labelled %v", s.Label["error"])
		}
	}
	if failed != 1 {
		t.Errorf("pprof: %d failed calls, want 1", failed)
	}
	var chrome bytes.Buffer
	if _, err := Chrome(&chrome, reader(t, data), nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(chrome.String(), `"status":"error"`); got != 1 || !strings.Contains(chrome.String(), `"end.message":"EOF"`) {
		t.Errorf("chrome: %d calls with status error, want 1, and the EOF as an end:\n%s", got, chrome.String())
	}
}

// TestFoldedAsJoined: Folded, which finds each line's names once, writes
// what joining the names of every chain's innermost calls and adding up
// the chains of one line writes, on generated traces: random programs,
// hostile ones (whose function tables repeat names), recursions deeper
// than MaxStack that meet once cut.
func TestFoldedAsJoined(t *testing.T) {
	eachAnalysed(t, analysis.Options{}, func(i int, p *analysis.Profile) {
		var got bytes.Buffer
		cut, err := Folded(&got, p)
		if err != nil {
			t.Fatal(err)
		}
		want, wantCut := foldedByJoining(p)
		if got.String() != want || cut != wantCut {
			t.Errorf("trace %d: Folded cut %d chains and wrote\n%s\nwant %d and\n%s", i, cut, got.String(), wantCut, want)
		}
	})
}

// TestProfileAsJoined: Profile, which shares the samples of chains that
// meet once cut and looks up no other, makes one sample per stack and
// label, with what adding up every chain's figures by stack and label
// gives, on the traces TestFoldedAsJoined reads.
func TestProfileAsJoined(t *testing.T) {
	eachAnalysed(t, analysis.Options{ByGoroutine: true}, func(i int, p *analysis.Profile) {
		prof, cut := Profile(p)
		if err := prof.CheckValid(); err != nil {
			t.Fatalf("trace %d: %v", i, err)
		}
		want, wantCut := samplesByJoining(p)
		got := map[string][3]int64{}
		seen := map[string]bool{}
		for _, s := range prof.Sample {
			var ids, names []string
			for _, l := range s.Location {
				ids = append(ids, strconv.FormatUint(l.ID, 10))
				names = append(names, l.Line[0].Function.Name)
			}
			label := fmt.Sprint(s.Label, s.NumLabel)
			if k := strings.Join(ids, ";") + " " + label; seen[k] {
				t.Errorf("trace %d: two samples of stack %s and labels %s", i, strings.Join(names, ";"), label)
			} else {
				seen[k] = true
			}
			k := strings.Join(names, ";") + " " + label
			v := got[k]
			for j := range v {
				v[j] += s.Value[j]
			}
			got[k] = v
		}
		if !maps.Equal(got, want) || cut != wantCut {
			t.Errorf("trace %d: Profile cut %d chains and made\n%v\nwant %d and\n%v", i, cut, got, wantCut, want)
		}
	})
}

// TestPprofAsProfile: Pprof, which writes each sample as it is made,
// writes the profile Profile makes, as the pprof package reads it back:
// the same samples (in another order), locations, functions and header,
// on the traces TestFoldedAsJoined reads.
func TestPprofAsProfile(t *testing.T) {
	eachAnalysed(t, analysis.Options{ByGoroutine: true}, func(i int, p *analysis.Profile) {
		var streamed, whole bytes.Buffer
		cut, err := Pprof(&streamed, p)
		if err != nil {
			t.Fatalf("trace %d: %v", i, err)
		}
		prof, wantCut := Profile(p)
		if err := prof.Write(&whole); err != nil {
			t.Fatalf("trace %d: %v", i, err)
		}
		got, err := profile.Parse(&streamed)
		if err != nil {
			t.Fatalf("trace %d: the export does not parse: %v", i, err)
		}
		want, err := profile.Parse(&whole)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := canonical(got), canonical(want); g != w || cut != wantCut {
			t.Errorf("trace %d: Pprof cut %d chains and wrote\n%s\nProfile cut %d and made\n%s", i, cut, g, wantCut, w)
		}
	})
}

// canonical prints p with its samples in order of what they print.
func canonical(p *profile.Profile) string {
	p = p.Copy()
	key := func(s *profile.Sample) string {
		var ids []string
		for _, l := range s.Location {
			ids = append(ids, strconv.FormatUint(l.ID, 10))
		}
		return fmt.Sprint(ids, s.Value, s.Label, s.NumLabel)
	}
	sort.Slice(p.Sample, func(i, j int) bool { return key(p.Sample[i]) < key(p.Sample[j]) })
	return p.String()
}

// eachAnalysed calls check with each trace generated reads, analysed
// with o, and fails if too few read.
func eachAnalysed(t *testing.T, o analysis.Options, check func(i int, p *analysis.Profile)) {
	t.Helper()
	checked := 0
	for i, data := range generated(t) {
		rd, err := tracefile.NewReader(bytes.NewReader(data))
		if err != nil {
			continue
		}
		check(i, analysis.Analyze(rd, o))
		checked++
	}
	if checked < 120 {
		t.Errorf("only %d traces read", checked)
	}
}

// samplesByJoining is Profile's figures added up the plain way, by the
// names of each chain's innermost calls, leaf first, and label.
func samplesByJoining(p *analysis.Profile) (map[string][3]int64, int) {
	out, cut := map[string][3]int64{}, 0
	add := func(stack string, label string, v [3]int64) {
		k := stack + " " + label
		s := out[k]
		for i := range s {
			s[i] += v[i]
		}
		out[k] = s
	}
	p.WalkPaths(func(path []*analysis.Node) {
		n := path[len(path)-1]
		if n.ByGoroutine == nil {
			return
		}
		path, c := innermost(path)
		if c {
			cut++
		}
		var names []string
		for i := len(path) - 1; i >= 0; i-- {
			names = append(names, p.Name(path[i].Func))
		}
		stack := strings.Join(names, ";")
		for _, sh := range n.ByGoroutine.Each {
			add(stack, fmt.Sprint(map[string][]string(nil), map[string][]int64{"goroutine": {int64(sh.G)}}), [3]int64{int64(sh.Calls), sh.Self, 0})
		}
		if sh := n.ByGoroutine.Others; sh.Calls > 0 {
			add(stack, fmt.Sprint(map[string][]string{"goroutines": {otherGoroutines}}, map[string][]int64(nil)), [3]int64{int64(sh.Calls), sh.Self, 0})
		}
		for id, calls := range n.ErrorIDs {
			if p.Failed(id) {
				add(stack, fmt.Sprint(map[string][]string{"error": {p.Error(id).String()}}, map[string][]int64(nil)), [3]int64{0, 0, int64(calls)})
			}
		}
	})
	return out, cut
}

// generated returns traces to check an export against a plain way of
// writing it: random programs, hostile ones (whose function tables
// repeat names), recursions deeper than MaxStack that meet once cut, in
// one goroutine or several, with errors.
func generated(t *testing.T) [][]byte {
	var traces [][]byte
	for seed := range uint64(100) {
		data, _, err := tracetest.Random(seed)
		if err != nil {
			t.Fatal(err)
		}
		traces = append(traces, data)
	}
	r := rand.New(rand.NewPCG(3, 4))
	// Few of them: making one can take a while (a profile that inflates
	// to megabytes, gzipped), which the race detector makes minutes.
	for range 40 {
		in := make([]byte, 64+r.IntN(1024))
		for i := range in {
			in[i] = byte(r.Uint32())
		}
		traces = append(traces, tracetest.Generate(in))
	}
	return append(traces, tracetest.Recursion(MaxStack), tracetest.Recursion(MaxStack+1), tracetest.Recursion(1000), sameNames(), deepFailing())
}

// deepFailing is a trace of three goroutines recursing through main.rec
// 300 deep, the first 100 deep too, the first two from main.main and the
// third from main.rec itself (so that a chain of MaxStack calls meets
// those cut to that many): every tenth call fails, on goroutine 1 with
// "boom" and on the others with "bang".
func deepFailing() []byte {
	var buf bytes.Buffer
	e, _ := tracewrite.NewEncoder(&buf, map[string]string{"program": "deep"})
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.main"}, {Name: "main.rec"}})
	e.Errors(1, []tracefile.Error{{Type: "*errors.errorString", Message: "boom"}, {Type: "*errors.errorString", Message: "bang"}})
	var b tracewrite.Batch
	t := int64(0)
	tick := func() int64 { t += 10; return t }
	for g := uint64(1); g <= 3; g++ {
		if g < 3 {
			b.Enter(g, 1, tick())
		}
		for _, depth := range []int{300, 100} {
			for range depth {
				b.Enter(g, 2, tick())
			}
			for i := range depth {
				if i%10 == 0 {
					b.Error(g, uint32(min(g, 2)), tick())
				}
				b.Exit(g, tracefile.Return, tick())
			}
			if g > 1 {
				break
			}
		}
		if g < 3 {
			b.Exit(g, tracefile.Return, tick())
		}
	}
	e.Clock(t+1, t+1)
	e.Events(&b)
	e.End("main returned", time.Time{})
	e.Flush()
	return buf.Bytes()
}

// sameNames is a trace whose functions 2 and 3 have one name, and 4 and
// 5 names that read the same in a folded line ("x;y", "x:y"): main.main
// calls 2 then 4, 3 then 5, and 2 and 3 in turn, 300 deep.
func sameNames() []byte {
	var buf bytes.Buffer
	e, _ := tracewrite.NewEncoder(&buf, map[string]string{"program": "names"})
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{{Name: "main.main"}, {Name: "main.a"}, {Name: "main.a"}, {Name: "x;y"}, {Name: "x:y"}})
	var b tracewrite.Batch
	t := int64(0)
	tick := func() int64 { t += 10; return t }
	b.Enter(1, 1, tick())
	for _, fns := range [][]uint32{{2, 4}, {3, 5}} {
		b.Enter(1, fns[0], tick())
		b.Enter(1, fns[1], tick())
		b.Exit(1, tracefile.Return, tick())
		b.Exit(1, tracefile.Return, tick())
	}
	for i := range 300 {
		b.Enter(1, uint32(2+i%2), tick())
	}
	for range 300 {
		b.Exit(1, tracefile.Return, tick())
	}
	b.Exit(1, tracefile.Return, tick())
	e.Clock(t+1, t+1)
	e.Events(&b)
	e.End("main returned", time.Time{})
	e.Flush()
	return buf.Bytes()
}

// foldedByJoining is Folded written the plain way: each chain's line
// joined from its names, the chains of one line added up in a map.
func foldedByJoining(p *analysis.Profile) (string, int) {
	self, cut := map[string]int64{}, 0
	p.WalkPaths(func(path []*analysis.Node) {
		n := path[len(path)-1]
		if n.Self <= 0 {
			return
		}
		path, c := innermost(path)
		if c {
			cut++
		}
		var names []string
		for _, a := range path {
			names = append(names, strings.ReplaceAll(p.Name(a.Func), ";", ":"))
		}
		self[strings.Join(names, ";")] += n.Self
	})
	var lines []string
	for k, v := range self {
		lines = append(lines, k+" "+strconv.FormatInt(v, 10))
	}
	sort.Strings(lines)
	if len(lines) == 0 {
		return "", cut
	}
	return strings.Join(lines, "\n") + "\n", cut
}
