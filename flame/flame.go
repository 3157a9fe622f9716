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

// FromProfile builds the flame graph of p. Boxes are as wide as the time
// of their chain's calls; with inverted, the graph shows self time, the
// functions it was spent in at the root and their callers above them.
func FromProfile(p *analysis.Profile, inverted bool) *Frame {
	root := &Frame{Name: "all"}
	p.Walk(func(n *analysis.Node) {
		path := n.Path()
		if inverted {
			if n.Self <= 0 {
				return
			}
			f := root
			f.Value += n.Self
			for i := len(path) - 1; i >= 0; i-- {
				f = f.child(p.Names(path[i]))
				f.Value += n.Self
			}
			return
		}
		f := root
		for _, id := range path[:len(path)-1] {
			f = f.child(p.Names(id))
		}
		f = f.child(p.Names(path[len(path)-1]))
		f.Value += n.Total
		if len(path) == 1 {
			root.Value += n.Total
		}
	})
	sortFrames(root)
	return root
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
