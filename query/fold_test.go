package query

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestFoldPath(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"main rec rec rec leaf", "main -> rec ×3 -> leaf"},
		// Indirect recursion folds its cycle, never a function of it.
		{"main odd even odd even leaf", "main -> (odd -> even) ×2 -> leaf"},
		{"main even odd even odd even leaf", "main -> (even -> odd) ×2 -> even -> leaf"},
		{"main even odd leaf", "main -> even -> odd -> leaf"},
		{"main a b b a b b a b b c", "main -> (a -> b ×2) ×3 -> c"},
		{"main a b c b c a b c b c", "main -> (a -> (b -> c) ×2) ×2"},
		// gojq's Compare, re-entered through a closure.
		{"sort Compare switch func2 Compare switch func2 Compare", "sort -> (Compare -> switch -> func2) ×2 -> Compare"},
	} {
		got := Text(FoldPath(strings.Fields(c.path)), " -> ")
		if got != c.want {
			t.Errorf("FoldPath(%s) = %s, want %s", c.path, got, c.want)
		}
	}
}

// TestFoldPathExact: a folded path can be written out as the path, for
// random paths over few functions, which recurse in every way.
func TestFoldPathExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "c", "d"}
	for range 20000 {
		path := make([]string, r.IntN(40))
		for i := range path {
			// Mostly cycles, sometimes a step out of them.
			if i >= 3 && r.IntN(4) > 0 {
				path[i] = path[i-1-r.IntN(3)]
			} else {
				path[i] = names[r.IntN(len(names))]
			}
		}
		f := FoldPath(path)
		if !Reaches(f, path) {
			t.Fatalf("%v folds to %s, which cannot be written out as it", path, Text(f, " -> "))
		}
		// Where it can end in paths near it, which it may or may not
		// reach, as a plain search of every way of writing it out says.
		near := slices.Clone(path)
		switch i := r.IntN(len(path) + 1); {
		case i == len(path):
			near = append(near, names[r.IntN(len(names))])
		case r.IntN(2) == 0:
			near = slices.Delete(near, i, i+1)
		default:
			near[i] = names[r.IntN(len(names))]
		}
		if got, want := ends(f, near, 0), endsPlain(f, near, 0); !slices.Equal(got, want) {
			t.Fatalf("%s ends in %v at %v, a plain search says %v", Text(f, " -> "), near, got, want)
		}
	}
}

// endsPlain is ends written the plain way: every place each run of each
// step can end, found by matching one run more at a time.
func endsPlain(steps []Step, path []string, i int) []int {
	at := []int{i}
	for _, s := range steps {
		var next []int
		for _, j := range at {
			cur := []int{j}
			for range max(s.Repeat, 1) {
				var after []int
				for _, k := range cur {
					if s.Cycle != nil {
						after = append(after, endsPlain(s.Cycle, path, k)...)
					} else if k < len(path) && path[k] == s.Name {
						after = append(after, k+1)
					}
				}
				slices.Sort(after)
				cur = slices.Compact(after)
				next = append(next, cur...)
			}
		}
		slices.Sort(next)
		at = slices.Compact(next)
	}
	return at
}

// TestFolderTokens: a chain written as tokens reads back the same, and
// its shortest path folds back to it, as a store keeps chains.
func TestFolderTokens(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	names := []string{"", "a", "b", "c", "d"}
	fd := NewFolder(func(id uint32) string { return names[id] })
	ids := map[string]uint64{"a": 1, "b": 3, "c": 5, "d": 7}
	byToken := map[uint64]string{1: "a", 3: "b", 5: "c", 7: "d"}
	for range 5000 {
		c := fd.Empty()
		for i := r.IntN(30); i > 0; i-- {
			c = fd.Push(c, uint32(1+r.IntN(3)))
		}
		steps := fd.Steps(c, true)
		tokens := Encode(nil, steps, func(n string) uint64 { return ids[n] })
		got, err := Decode(tokens, c.Counts(nil), func(t uint64) string { return byToken[t] })
		if err != nil || Text(got, " -> ") != Text(steps, " -> ") {
			t.Fatalf("%s reads back as %s, %v", Text(steps, " -> "), Text(got, " -> "), err)
		}
		if back := FoldPath(Expand(steps)); Key(back) != Key(steps) {
			t.Fatalf("%s expands to %v, which folds to %s", Text(steps, " -> "), Expand(steps), Text(back, " -> "))
		}
	}
}
