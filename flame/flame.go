// Package flame draws flame graphs of exact call durations, not samples:
// a static SVG, or a self-contained HTML page with zoom, search and an
// icicle view, and differential colouring against a base trace.
package flame

import (
	"sort"

	"github.com/calltrail/calltrail/analysis"
)

// Frame is one box of a flame graph: a function in a chain of calls.
type Frame struct {
	Name     string   `json:"n"`
	Value    int64    `json:"v"`           // nanoseconds
	Base     int64    `json:"b,omitempty"` // nanoseconds in the base trace, with Diff
	Children []*Frame `json:"c,omitempty"`
}

func (f *Frame) child(name string) *Frame {
	for _, c := range f.Children {
		if c.Name == name {
			return c
		}
	}
	c := &Frame{Name: name}
	f.Children = append(f.Children, c)
	return c
}

// Weight is what a flame graph's boxes measure.
type Weight int

const (
	Wall Weight = iota // wall time of the calls
	CPU                // time on CPU, from the Go runtime's CPU profile
	Wait               // time off CPU: wall time less CPU time
)

func (w Weight) of(n *analysis.Node) int64 {
	switch w {
	case CPU:
		return n.CPU
	case Wait:
		return n.Wait
	}
	return n.Total
}

// self is the part of n's weight not in its traced callees.
func (w Weight) self(n *analysis.Node) int64 {
	if w == Wall {
		return n.Self
	}
	v := w.of(n)
	for _, c := range n.Children {
		v -= w.of(c)
	}
	return max(v, 0)
}

// FromProfile builds the flame graph of p's wall time. Boxes are as wide
// as the time of their chain's calls; with inverted, the graph shows self
// time, the functions it was spent in at the root and their callers above
// them.
func FromProfile(p *analysis.Profile, inverted bool) *Frame {
	return FromProfileBy(p, inverted, Wall)
}

// FromProfileBy builds the flame graph of p with boxes as wide as weight
// w: wall time, or its on-CPU or off-CPU part when p has a CPU profile
// (p.HasCPU).
func FromProfileBy(p *analysis.Profile, inverted bool, w Weight) *Frame {
	root := &Frame{Name: "all"}
	p.Walk(func(n *analysis.Node) {
		path := n.Path()
		if inverted {
			v := w.self(n)
			if v <= 0 {
				return
			}
			f := root
			f.Value += v
			for i := len(path) - 1; i >= 0; i-- {
				f = f.child(p.Names(path[i]))
				f.Value += v
			}
			return
		}
		v := w.of(n)
		if v <= 0 {
			return
		}
		f := root
		for _, id := range path[:len(path)-1] {
			f = f.child(p.Names(id))
		}
		f = f.child(p.Names(path[len(path)-1]))
		f.Value += v
		if len(path) == 1 {
			root.Value += v
		}
	})
	if !inverted && w != Wall {
		fit(root)
	}
	sortFrames(root)
	return root
}

// fit makes each frame at least as wide as its children. Profile samples
// are not exact: a caller's off-CPU time can come out a little below the
// sum of its callees'.
func fit(f *Frame) int64 {
	var sum int64
	for _, c := range f.Children {
		sum += fit(c)
	}
	f.Value = max(f.Value, sum)
	return f.Value
}

// sortFrames orders children by name, as flame graphs do, so that the
// same chains sit at the same places in graphs of different traces.
func sortFrames(f *Frame) {
	sort.Slice(f.Children, func(i, j int) bool { return f.Children[i].Name < f.Children[j].Name })
	for _, c := range f.Children {
		sortFrames(c)
	}
}

// Diff sets each frame's Base to the value of the frame at the same path
// in base: the change between the two traces colours the graph. Frames of
// base missing from f are added with no value, so that what vanished is
// not lost from the numbers.
func (f *Frame) Diff(base *Frame) {
	f.Base = base.Value
	for _, b := range base.Children {
		f.child(b.Name).Diff(b)
	}
	sortFrames(f)
}
