package query

import (
	"path/filepath"
	"strings"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/diagnose"
)

// Overview is what a trace holds at a glance: the program, its calls, the
// findings, the busiest functions and the goroutines.
type Overview struct {
	File       string `json:"file"`
	Name       string `json:"name"` // a short name for the program
	Program    string `json:"program"`
	Go         string `json:"go"`
	DurationNs int64  `json:"duration_ns"` // to the last event, from the start of tracing
	// WindowNs is, for a flight recorder's snapshot, its window's length:
	// its calls, those open at its start included, count from its start.
	WindowNs   int64  `json:"window_ns,omitempty"`
	Goroutines int    `json:"goroutines"`
	Calls      uint64 `json:"calls"`
	Dropped    uint64 `json:"dropped"`
	// Full is what the program did when a ring was full (CALLTRAIL_FULL:
	// wait or drop; empty in older traces); HeldNs is the time its
	// goroutines waited for the trace writer, summed, in Waits waits.
	Full      string `json:"full,omitempty"`
	HeldNs    uint64 `json:"held_ns"`
	Waits     uint64 `json:"waits"`
	Functions int    `json:"functions"`
	HasCPU    bool   `json:"has_cpu"`   // the Go runtime's CPU profile is in the trace
	HasWaits  bool   `json:"has_waits"` // and its block or mutex profile
	// ThinCPU says the trace's CPU profile was left out: too few samples
	// (less than analysis.MinCPU) to split time on and off CPU.
	ThinCPU bool `json:"thin_cpu,omitempty"`
	// ProfilesLeftOut says the view is of some calls only (some
	// requests', or those a filter selects by goroutine, time, duration
	// or ending), and profiles whose samples do not tell them apart are
	// left out of it (see analysis.Profile.ProfilesLeftOut).
	ProfilesLeftOut bool               `json:"profiles_left_out,omitempty"`
	Findings        []diagnose.Finding `json:"findings"`
	TopSelf         []Function         `json:"top_self"`
	TopTotal        []Function         `json:"top_total"`
	Routines        Goroutines         `json:"goroutine_summary"`
	// Errors counts the calls that failed; TopErrors are the functions
	// that failed the most, none without errors, whatever their time: a
	// function that fails is worth a look however little time it takes.
	Errors    uint64     `json:"errors"`
	TopErrors []Function `json:"top_errors,omitempty"`
}

// FailedCalls returns the number of calls in the trace that returned an
// error (other than one of tracefile.Ends).
func (t *Trace) FailedCalls() uint64 { return failedCalls(t.Profile) }

func failedCalls(p *analysis.Profile) uint64 {
	var n uint64
	for _, f := range p.Funcs {
		n += f.Errors
	}
	return n
}

// Calls returns the number of calls in the trace.
func (t *Trace) Calls() uint64 {
	var n uint64
	for _, f := range t.Profile.Funcs {
		n += f.Calls
	}
	return n
}

// Overview returns the overview, with top functions by self and by total
// time, and the goroutines alive in each of slices slices of the trace.
func (t *Trace) Overview(top, slices int) Overview {
	p := t.Profile
	o := Overview{
		File:            t.Name,
		Name:            t.ProgramName(),
		Program:         strings.TrimSpace(p.Meta.Path + " " + p.Meta.Args),
		Go:              strings.TrimSpace(p.Meta.Go + " " + p.Meta.GOOS + "/" + p.Meta.GOARCH),
		DurationNs:      int64(p.Duration),
		Goroutines:      p.Goroutines,
		Calls:           t.Calls(),
		Dropped:         p.Stats.DroppedCalls,
		Full:            p.Meta.Full,
		HeldNs:          p.Stats.HeldNs,
		Waits:           p.Stats.Waits,
		Functions:       len(p.Funcs),
		HasCPU:          p.HasCPU,
		HasWaits:        p.HasWaits,
		ThinCPU:         p.ThinCPU,
		ProfilesLeftOut: p.ProfilesLeftOut,
		Findings:        t.Findings,
		TopSelf:         t.Functions("self", top),
		TopTotal:        t.Functions("total", top),
		Routines:        t.Goroutines(slices, 5),
	}
	if w := p.Meta.Window; p.Meta.Snapshot() {
		o.WindowNs = int64(w.End - w.Start)
	}
	if o.Findings == nil {
		o.Findings = []diagnose.Finding{}
	}
	if o.Errors = t.FailedCalls(); o.Errors > 0 {
		for _, f := range t.Functions("errors", top) {
			if f.Errors > 0 {
				o.TopErrors = append(o.TopErrors, f)
			}
		}
	}
	return o
}

// ProgramName names the traced program for people, with its arguments:
// its binary's name, or, for a program that calltrail run built in a
// temporary directory (named "program"), its main package's directory.
func (t *Trace) ProgramName() string {
	m := t.Profile.Meta
	name := m.Program
	if name == "" && m.Path != "" {
		name = filepath.Base(m.Path)
	}
	if id, ok := t.byName["main.main"]; ok && name == "program" {
		file := t.Profile.Func(id).File
		if dir := filepath.Base(filepath.Dir(file)); dir != "." && dir != string(filepath.Separator) {
			name = dir
		}
	}
	return strings.TrimSpace(name + " " + m.Args)
}
