package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/calltrail/calltrail/analysis"
)

func init() {
	var (
		ff     filterFlags
		top    int
		asJSON bool
	)
	register(&verb{
		name:    "goroutines",
		args:    "[--top N] [--json] [filters] [FILE]",
		summary: "goroutines over time: how many, how long they lived, their work, who started them",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			top, asJSON = 10, false
			fs.IntVar(&top, "top", 10, "show the first `N` chains that started goroutines (0: all)")
			fs.BoolVar(&asJSON, "json", false, "print JSON")
		},
		run: func(_ *flag.FlagSet, args []string) error {
			_, p, err := ff.analyze(args, analysis.Options{})
			if err != nil {
				return err
			}
			g := p.GoroutineSummary(60)
			var spawners []analysis.Spawner
			for _, s := range g.Spawners {
				if s.Node.Parent == nil {
					continue // started before any traced call
				}
				if top > 0 && len(spawners) == top {
					break
				}
				spawners = append(spawners, s)
			}
			if asJSON {
				return writeGoroutinesJSON(p, g, spawners)
			}
			writeGoroutines(p, g, spawners)
			return nil
		},
	})
}

func writeGoroutines(p *analysis.Profile, g *analysis.Goroutines, spawners []analysis.Spawner) {
	fmt.Fprintf(out, "%d goroutines ran traced code over %s; at most %d at one instant\n", g.Count, dur(int64(p.Duration)), g.MaxLive)
	fmt.Fprintf(out, "lifetime:     p50 %s, p90 %s, max %s\n", dur(int64(g.Lifetime.P50)), dur(int64(g.Lifetime.P90)), dur(int64(g.Lifetime.Max)))
	fmt.Fprintf(out, "traced work:  p50 %s, p90 %s, max %s\n", dur(int64(g.Work.P50)), dur(int64(g.Work.P90)), dur(int64(g.Work.Max)))
	if len(g.Live) > 0 {
		top := slices.Max(g.Live)
		fmt.Fprintf(out, "alive:        %s  (0 to %d in a column of %s)\n", sparkline(g.Live, top), top, dur(int64(g.Slice)))
	}
	if len(spawners) == 0 {
		return
	}
	fmt.Fprintf(out, "\nstarted by:\n")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "goroutines\tcalls\tper call\t  chain\n")
	for _, s := range spawners {
		fmt.Fprintf(tw, "%d\t%d\t%.1f\t  %s\n", s.Goroutines, s.Node.Calls, s.PerCall(), strings.Join(pathNames(p, s.Node), " → "))
	}
	tw.Flush()
}

// sparkline draws counts as a row of block characters, the tallest for
// top.
func sparkline(counts []int, top int) string {
	const bars = "▁▂▃▄▅▆▇█"
	levels := []rune(bars)
	var b strings.Builder
	for _, c := range counts {
		switch {
		case c == 0:
			b.WriteRune(' ')
		default:
			b.WriteRune(levels[min((c*len(levels)-1)/max(top, 1), len(levels)-1)])
		}
	}
	return b.String()
}

func writeGoroutinesJSON(p *analysis.Profile, g *analysis.Goroutines, spawners []analysis.Spawner) error {
	type spawner struct {
		Chain      []string `json:"chain"`
		Goroutines uint64   `json:"goroutines"`
		Calls      uint64   `json:"calls"`
		PerCall    float64  `json:"per_call"`
	}
	type spread struct {
		P50 int64 `json:"p50_ns"`
		P90 int64 `json:"p90_ns"`
		Max int64 `json:"max_ns"`
	}
	v := struct {
		Goroutines int       `json:"goroutines"`
		MaxLive    int       `json:"max_alive"`
		Lifetime   spread    `json:"lifetime"`
		Work       spread    `json:"work"`
		SliceNs    int64     `json:"slice_ns"`
		Alive      []int     `json:"alive"`
		StartedBy  []spawner `json:"started_by"`
	}{
		Goroutines: g.Count, MaxLive: g.MaxLive, SliceNs: int64(g.Slice), Alive: g.Live,
		Lifetime:  spread{int64(g.Lifetime.P50), int64(g.Lifetime.P90), int64(g.Lifetime.Max)},
		Work:      spread{int64(g.Work.P50), int64(g.Work.P90), int64(g.Work.Max)},
		StartedBy: []spawner{},
	}
	for _, s := range spawners {
		v.StartedBy = append(v.StartedBy, spawner{pathNames(p, s.Node), s.Goroutines, s.Node.Calls, s.PerCall()})
	}
	e := json.NewEncoder(out)
	e.SetIndent("", "  ")
	return e.Encode(v)
}
