package main

import (
	"flag"
	"fmt"
	"github.com/calltrail/calltrail/internal/words"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/query"
)

func goroutinesVerb() *verb {
	var (
		ff filterFlags
		lf topFlags
	)
	return &verb{
		name:    "goroutines",
		args:    "[--top N] [--json] [filters] [FILE]",
		summary: "goroutines over time: how many, how long they lived, their work, who started them",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			lf.register(fs, 10, "show the first `N` chains that started goroutines (0: all)")
		},
		run: func(_ *flag.FlagSet, args []string) error {
			t, err := ff.load(args, analysis.Options{})
			if err != nil {
				return err
			}
			g := t.Goroutines(60, lf.top)
			if lf.json {
				return writeJSON(out, g)
			}
			writeGoroutines(t, g)
			return nil
		},
	}
}

func writeGoroutines(t *query.Trace, g query.Goroutines) {
	fmt.Fprintf(out, "%s ran traced code over %s; at most %d at one instant\n", words.Count(g.Count, "goroutine"), dur(int64(t.Profile.Duration)), g.MaxLive)
	fmt.Fprintf(out, "lifetime:     p50 %s, p90 %s, max %s\n", dur(int64(g.Lifetime.P50)), dur(int64(g.Lifetime.P90)), dur(int64(g.Lifetime.Max)))
	fmt.Fprintf(out, "traced work:  p50 %s, p90 %s, max %s\n", dur(int64(g.Work.P50)), dur(int64(g.Work.P90)), dur(int64(g.Work.Max)))
	if len(g.Live) > 0 {
		top := slices.Max(g.Live)
		fmt.Fprintf(out, "alive:        %s  (0 to %d in a column of %s)\n", sparkline(g.Live, top), top, dur(int64(g.Slice)))
	}
	if len(g.StartedBy) == 0 {
		return
	}
	fmt.Fprintf(out, "\nstarted by:\n")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "goroutines\tcalls\tper call\t  chain\n")
	for _, s := range g.StartedBy {
		fmt.Fprintf(tw, "%d\t%d\t%.1f\t  %s\n", s.Goroutines, s.Calls, s.PerCall, query.Text(s.Chain, " → "))
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
