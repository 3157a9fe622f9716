package analysis

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/tracefile"
)

// TestCheckValidAnalyzed: what Analyze makes is valid, for random traces
// and for the extreme ones the fuzzers generate, and owns its tables
// once the reader is gone.
func TestCheckValidAnalyzed(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for seed := range uint64(50) {
		data, _, err := tracetest.Random(seed)
		if err != nil {
			t.Fatal(err)
		}
		gen := make([]byte, 64)
		for i := range gen {
			gen[i] = byte(rng.IntN(256))
		}
		for _, d := range [][]byte{data, tracetest.Generate(gen)} {
			r, err := tracefile.NewReader(bytes.NewReader(d))
			if err != nil {
				continue
			}
			p := Analyze(r, Options{Slowest: 2, ByGoroutine: true})
			if err := p.CheckValid(); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			for id, f := range p.Funcs {
				if p.Name(id) != f.Name || p.Func(id).Name != f.Name {
					t.Fatalf("seed %d: function %d is %q, Name says %q", seed, id, f.Name, p.Name(id))
				}
			}
		}
	}
}

// TestCheckValidBroken: each way of breaking a profile is caught.
func TestCheckValidBroken(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		breakIt    func(p *Profile)
	}{
		{"no root", "root", func(p *Profile) { p.Root = nil }},
		{"function out of the table", "not in the table", func(p *Profile) { p.Root.Children[0].Func = 99 }},
		{"child not pointing back", "point back", func(p *Profile) { p.Root.Children[0].Children[0].Parent = p.Root }},
		{"more panics than calls", "panics", func(p *Profile) { p.Root.Children[0].Panics = 10 }},
		{"negative self", "self -1", func(p *Profile) { p.Root.Children[0].Self = -1 }},
		{"error out of the table", "error id 7", func(p *Profile) { p.Root.Children[0].ErrorIDs = map[uint32]uint64{7: 1} }},
		{"spawned from outside", "spawned from", func(p *Profile) {
			p.Root.Children[0].SpawnedFrom = map[*Node]uint64{{Func: 1}: 1}
		}},
		{"function under another id", "listed under", func(p *Profile) {
			for id, f := range p.Funcs {
				p.Funcs[id+100] = f
				return
			}
		}},
		{"function renamed", "named", func(p *Profile) {
			for _, f := range p.Funcs {
				f.Name += "x"
				return
			}
		}},
		{"goroutine slices", "lifetimes", func(p *Profile) { p.Work = append(p.Work, 1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Analyze(build(t, "1 +main 0\n1 +f 10\n1 - 20\n1 - 30\n"), Options{})
			if err := p.CheckValid(); err != nil {
				t.Fatalf("before breaking it: %v", err)
			}
			tc.breakIt(p)
			if err := p.CheckValid(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckValid = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
