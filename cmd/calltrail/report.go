package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/diagnose"
	"github.com/calltrail/calltrail/internal/seedview"
	"github.com/calltrail/calltrail/tracefile"
)

// analyze opens a trace and analyses it, warning about what is missing
// from a cut or damaged one rather than failing.
func analyze(name string, o analysis.Options) (*analysis.Profile, *tracefile.Reader, error) {
	file, r, err := openTrace(name)
	if err != nil {
		return nil, nil, err
	}
	defer file.Close()
	p := analysis.Analyze(r, o)
	if p.Err != nil {
		if !tracefile.IsIncomplete(p.Err) {
			return nil, nil, readError(name, p.Err)
		}
		fmt.Fprintf(errOut, "calltrail: warning: %s: %v; the analysis covers what comes before\n", name, p.Err)
	}
	if p.Stats.DroppedCalls > 0 {
		fmt.Fprintf(errOut, "calltrail: warning: %s: %d calls were dropped while recording (buffers full); figures leave them out\n", name, p.Stats.DroppedCalls)
	}
	return p, r, nil
}

// analyze analyses the trace named in args, with the flags' filter.
func (ff *filterFlags) analyze(args []string, o analysis.Options) (string, *analysis.Profile, error) {
	name, f, err := ff.traceAndFilter(args)
	if err != nil {
		return "", nil, err
	}
	o.Filter = f
	p, _, err := analyze(name, o)
	return name, p, err
}

func init() {
	var (
		ff     filterFlags
		sortBy string
		top    int
		asJSON bool
	)
	register(&verb{
		name:    "report",
		args:    "[--sort self|total|calls|max] [--top N] [--json] [filters] [FILE]",
		summary: "per function: calls, total and self time, mean, p50, p99, max, panics",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			sortBy, top, asJSON = "self", 0, false
			fs.StringVar(&sortBy, "sort", "self", "order functions by `KEY`: self, total, calls, max or mean")
			fs.IntVar(&top, "top", 0, "show only the first `N` functions (0: all)")
			fs.BoolVar(&asJSON, "json", false, "print JSON")
		},
		run: func(_ *flag.FlagSet, args []string) error {
			switch sortBy {
			case "self", "total", "calls", "max", "mean":
			default:
				return usageError{fmt.Sprintf("--sort %q: want self, total, calls, max or mean", sortBy)}
			}
			_, p, err := ff.analyze(args, analysis.Options{})
			if err != nil {
				return err
			}
			funcs := p.Sorted(sortBy)
			if top > 0 && top < len(funcs) {
				funcs = funcs[:top]
			}
			findings := diagnose.Findings(p, 5)
			if asJSON {
				return writeReportJSON(out, funcs, findings)
			}
			writeFindings(out, findings)
			writeReport(out, funcs, p.HasCPU)
			return nil
		},
	})
}

type funcJSON struct {
	Name   string     `json:"name"`
	Calls  uint64     `json:"calls"`
	Total  int64      `json:"total_ns"`
	Self   int64      `json:"self_ns"`
	Mean   int64      `json:"mean_ns"`
	P50    int64      `json:"p50_ns"`
	P99    int64      `json:"p99_ns"`
	Max    int64      `json:"max_ns"`
	Panics uint64     `json:"panics"`
	CPU    *int64     `json:"cpu_ns,omitempty"`
	Wait   *int64     `json:"wait_ns,omitempty"`
	Waits  []waitJSON `json:"waits,omitempty"`
	// Syscalls is CPU time in blocking system calls, by the untraced
	// function called.
	Syscalls []waitJSON `json:"syscalls,omitempty"`
}

type waitJSON struct {
	On string `json:"on"`
	Ns int64  `json:"ns"`
}

// writeFindings prints findings as numbered paragraphs, and a blank line.
func writeFindings(w io.Writer, fs []diagnose.Finding) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintln(w, "Findings:")
	for i, f := range fs {
		fmt.Fprintf(w, "%d. %s\n", i+1, f.Message)
	}
	fmt.Fprintln(w)
}

func writeReportJSON(w io.Writer, funcs []*analysis.Func, findings []diagnose.Finding) error {
	out := struct {
		Findings  []diagnose.Finding `json:"findings"`
		Functions []funcJSON         `json:"functions"`
	}{Findings: findings, Functions: []funcJSON{}}
	if out.Findings == nil {
		out.Findings = []diagnose.Finding{}
	}
	for _, f := range funcs {
		fj := funcJSON{
			Name: f.Name, Calls: f.Calls, Total: f.Total, Self: f.Self, Mean: int64(f.Mean()),
			P50: int64(f.Quantile(0.5)), P99: int64(f.Quantile(0.99)), Max: f.Max, Panics: f.Panics,
		}
		if f.CPU > 0 || f.Wait > 0 {
			fj.CPU, fj.Wait = &f.CPU, &f.Wait
		}
		for _, w := range f.Waits {
			fj.Waits = append(fj.Waits, waitJSON{w.On, w.Ns})
		}
		for _, w := range f.Syscalls {
			fj.Syscalls = append(fj.Syscalls, waitJSON{w.On, w.Ns})
		}
		out.Functions = append(out.Functions, fj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func dur(ns int64) string { return seedview.Round(time.Duration(ns)).String() }

func writeReport(w io.Writer, funcs []*analysis.Func, split bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "self\ttotal\tcalls\tmean\tp50\tp99\tmax\tpanics\t"
	if split {
		head += "cpu\twait\t"
	}
	fmt.Fprintf(tw, "%s\tfunction\n", head)
	for _, f := range funcs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t", dur(f.Self), dur(f.Total), f.Calls,
			dur(int64(f.Mean())), dur(int64(f.Quantile(0.5))), dur(int64(f.Quantile(0.99))), dur(f.Max), f.Panics)
		name := f.Name
		if split {
			fmt.Fprintf(tw, "%s\t%s\t", dur(f.CPU), dur(f.Wait))
			switch {
			case len(f.Waits) > 0:
				name += " (waits on " + f.Waits[0].On + ")"
			case len(f.Syscalls) > 0 && 2*f.SyscallCPU() >= f.SelfCPU:
				name += " (in system calls: " + f.Syscalls[0].On + ")"
			}
		}
		fmt.Fprintf(tw, "\t%s\n", name)
	}
	tw.Flush()
}

func init() {
	var (
		ff      filterFlags
		asJSON  bool
		slowest int
		panics  bool
	)
	register(&verb{
		name:    "chains",
		args:    "[--json] [--slowest N] [--panics] [filters] FUNC [FILE]",
		summary: "every chain of calls that reached FUNC, with counts, times and the slowest calls",
		flags: func(fs *flag.FlagSet) {
			ff.register(fs)
			asJSON, slowest, panics = false, 3, false
			fs.BoolVar(&asJSON, "json", false, "print JSON")
			fs.IntVar(&slowest, "slowest", 3, "show the `N` slowest calls of each chain")
			fs.BoolVar(&panics, "panics", false, "only calls left by a panic")
		},
		run: func(_ *flag.FlagSet, args []string) error {
			if len(args) == 0 {
				return usageError{"name the function, e.g. calltrail chains main.D"}
			}
			fn, rest := args[0], args[1:]
			name, f, err := ff.traceAndFilter(rest)
			if err != nil {
				return err
			}
			p, r, err := analyze(name, analysis.Options{Filter: f, Slowest: max(slowest, 0), OnlyPanics: panics})
			if err != nil {
				return err
			}
			ids, err := matchFunc(r, fn)
			if err != nil {
				return err
			}
			var nodes []*analysis.Node
			for _, id := range ids {
				nodes = append(nodes, p.Nodes(id)...)
			}
			if asJSON {
				return writeChainsJSON(out, p, fn, nodes)
			}
			writeChains(out, p, nodes)
			return nil
		},
	})
}

// matchFunc finds function ids by exact name, else by regular expression;
// an unknown function is an error naming the closest ones.
func matchFunc(r *tracefile.Reader, query string) ([]uint32, error) {
	n := r.NumFuncs()
	for id := 1; id <= n; id++ {
		if r.Func(uint32(id)).Name == query {
			return []uint32{uint32(id)}, nil
		}
	}
	var ids []uint32
	if re, err := regexp.Compile(query); err == nil {
		for id := 1; id <= n; id++ {
			if re.MatchString(r.Func(uint32(id)).Name) {
				ids = append(ids, uint32(id))
			}
		}
	}
	if len(ids) > 0 {
		return ids, nil
	}
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for id := 1; id <= n; id++ {
		name := r.Func(uint32(id)).Name
		cs = append(cs, cand{name, distance(strings.ToLower(query), strings.ToLower(name))})
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].d < cs[j].d || cs[i].d == cs[j].d && cs[i].name < cs[j].name })
	var near []string
	for _, c := range cs[:min(3, len(cs))] {
		near = append(near, c.name)
	}
	if len(near) == 0 {
		return nil, fmt.Errorf("no function %q: the trace has no functions", query)
	}
	return nil, fmt.Errorf("no function %q in the trace; closest: %s", query, strings.Join(near, ", "))
}

// distance is the edit distance between a and b, with a match inside b
// counted as close.
func distance(a, b string) int {
	if strings.Contains(b, a) {
		return len(b) - len(a)
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)] + 100 // a true substring always ranks first
}

func pathNames(p *analysis.Profile, n *analysis.Node) []string {
	var names []string
	for _, id := range n.Path() {
		names = append(names, p.Names(id))
	}
	return names
}

// spawns returns the chains that started the goroutines running n's chain.
func spawns(p *analysis.Profile, n *analysis.Node) [][]string {
	var out [][]string
	for from := range n.Root().SpawnedFrom {
		out = append(out, pathNames(p, from))
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], ";") < strings.Join(out[j], ";") })
	return out
}

func writeChains(w io.Writer, p *analysis.Profile, nodes []*analysis.Node) {
	if len(nodes) == 0 {
		fmt.Fprintln(w, "no calls")
		return
	}
	for i, n := range nodes {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n", strings.Join(pathNames(p, n), " -> "))
		for _, s := range spawns(p, n) {
			fmt.Fprintf(w, "  in goroutines started from %s\n", strings.Join(s, " -> "))
		}
		fmt.Fprintf(w, "  %d calls, total %s, mean %s, max %s", n.Calls, dur(n.Total), dur(n.Total/int64(max(n.Calls, 1))), dur(n.Max))
		if n.Panics > 0 {
			fmt.Fprintf(w, ", %d panicked", n.Panics)
		}
		fmt.Fprintln(w)
		for _, in := range n.Slowest {
			note := ""
			if in.Exit != tracefile.Return {
				note = " (" + in.Exit.String() + ")"
			}
			fmt.Fprintf(w, "    g[%02d] at %s: %s%s\n", in.G, dur(in.Start), dur(in.Dur), note)
		}
	}
}

type instanceJSON struct {
	G     uint64 `json:"goroutine"`
	Start int64  `json:"start_ns"`
	Dur   int64  `json:"duration_ns"`
	Exit  string `json:"exit"`
}

type chainJSON struct {
	Path        []string       `json:"path"`
	Calls       uint64         `json:"calls"`
	Total       int64          `json:"total_ns"`
	Mean        int64          `json:"mean_ns"`
	Max         int64          `json:"max_ns"`
	Panics      uint64         `json:"panics"`
	SpawnedFrom [][]string     `json:"spawned_from"`
	Slowest     []instanceJSON `json:"slowest"`
}

func writeChainsJSON(w io.Writer, p *analysis.Profile, fn string, nodes []*analysis.Node) error {
	out := struct {
		Function string      `json:"function"`
		Chains   []chainJSON `json:"chains"`
	}{Function: fn, Chains: []chainJSON{}}
	for _, n := range nodes {
		c := chainJSON{Path: pathNames(p, n), Calls: n.Calls, Total: n.Total, Mean: n.Total / int64(max(n.Calls, 1)), Max: n.Max,
			Panics: n.Panics, SpawnedFrom: spawns(p, n), Slowest: []instanceJSON{}}
		if c.SpawnedFrom == nil {
			c.SpawnedFrom = [][]string{}
		}
		for _, in := range n.Slowest {
			c.Slowest = append(c.Slowest, instanceJSON{in.G, in.Start, in.Dur, in.Exit.String()})
		}
		out.Chains = append(out.Chains, c)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
