package spawn

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// stack is a goroutine's open calls, each named by its function and
// start time, for the tests.
type stack struct {
	fns     []uint32
	starts  []int64
	callees [][]string // of each open call, the calls it made, as "fn@start"
	pending Pending[string]
	latest  int64
}

// Callee makes it a Callees: the latest call of fn the i-th open call
// made.
func (s *stack) Callee(i int, fn uint32) (string, bool) {
	cs := s.callees[i]
	for j := len(cs) - 1; j >= 0; j-- {
		if strings.HasPrefix(cs[j], fmt.Sprintf("f%d@", fn)) {
			return cs[j], true
		}
	}
	return "", false
}

func (s *stack) Len() int { return len(s.fns) }

func (s *stack) Latest() int64 { return s.latest }

func (s *stack) At(i int) (uint32, string) { return s.fns[i], name(s.fns[i], s.starts[i]) }

func name(fn uint32, t int64) string { return fmt.Sprintf("f%d@%d", fn, t) }

// run plays a script of events, one per line:
//
//	G enter FN TIME
//	G exit TIME
//	G start PARENT CREATOR TIME
//
// and returns the links made, in order, as "G<-FROM root ROOT", with
// "?" for a chain not known.
func run(t *testing.T, max int, script string) []string {
	t.Helper()
	var out []string
	l := New(max, func(k *Link[string]) {
		root, from := "?", "?"
		if k.HasRoot {
			root = k.Root
		}
		if k.HasFrom {
			from = k.From
		}
		out = append(out, fmt.Sprintf("%d<-%s root %s", k.G, from, root))
	})
	gs := map[uint64]*stack{}
	for _, line := range strings.Split(strings.TrimSpace(script), "\n") {
		var g, a, b, c uint64
		var verb string
		if _, err := fmt.Sscan(line, &g, &verb); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		st := gs[g]
		if st == nil {
			st = &stack{}
			gs[g] = st
		}
		switch verb {
		case "enter":
			fmt.Sscan(line, &g, &verb, &a, &b)
			l.Enter(g, &st.pending, uint32(a), int64(b), name(uint32(a), int64(b)), st)
			if n := len(st.fns); n > 0 {
				st.callees[n-1] = append(st.callees[n-1], name(uint32(a), int64(b)))
			}
			st.fns, st.starts = append(st.fns, uint32(a)), append(st.starts, int64(b))
			st.callees = append(st.callees, nil)
			st.latest = int64(b)
		case "exit":
			fmt.Sscan(line, &g, &verb, &b)
			l.Exit(&st.pending, int64(b), st)
			fn, root := st.At(0)
			st.fns, st.starts, st.callees = st.fns[:len(st.fns)-1], st.starts[:len(st.starts)-1], st.callees[:len(st.callees)-1]
			st.latest = int64(b)
			if len(st.fns) == 0 {
				l.Idle(g, &st.pending, fn, root)
			}
		case "start":
			fmt.Sscan(line, &g, &verb, &a, &b, &c)
			var ps Stack[string]
			var pending *Pending[string]
			if p := gs[a]; p != nil && p.Len() > 0 {
				ps, pending = p, &p.pending
			}
			l.Started(g, a, uint32(b), int64(c), ps, pending)
		default:
			t.Fatalf("%q: unknown event", line)
		}
	}
	l.Flush()
	return out
}

func TestLinker(t *testing.T) {
	tests := []struct {
		name, script string
		want         []string
	}{{
		name: "parent in its creator",
		script: `
1 enter 1 10
1 enter 2 11
1 enter 3 12
2 start 1 2 13
2 enter 9 14`,
		want: []string{"2<-f2@11 root f9@14"},
	}, {
		name: "creator not traced: the innermost call",
		script: `
1 enter 1 10
1 enter 3 12
2 start 1 7 13
2 enter 9 14`,
		want: []string{"2<-f3@12 root f9@14"},
	}, {
		// The child's record is read before the parent's call of the
		// creator: that call is the one.
		name: "read before the creator's call",
		script: `
2 start 1 2 13
2 enter 9 14
1 enter 1 10
1 enter 2 11`,
		want: []string{"2<-f2@11 root f9@14"},
	}, {
		// Read before any of the parent's events, and no call of the
		// creator comes: the parent's first event after the child
		// began tells which calls were open then.
		name: "settled by the parent's next event",
		script: `
2 start 1 7 13
2 enter 9 14
1 enter 1 10
1 enter 3 12
1 exit 15`,
		want: []string{"2<-f3@12 root f9@14"},
	}, {
		// The parent's calls all began after the child did: none of
		// them started it.
		name: "orphan",
		script: `
2 start 1 7 13
2 enter 9 14
1 enter 1 20
1 exit 21`,
		want: []string{"2<-? root f9@14"},
	}, {
		name: "no parent",
		script: `
1 start 0 0 1
1 enter 1 2`,
		want: []string{"1<-? root f1@2"},
	}, {
		name: "no call: flushed at the end",
		script: `
1 enter 1 10
2 start 1 1 11`,
		want: []string{"2<-f1@10 root ?"},
	}, {
		// The child is read while the parent, as read so far, has no
		// call open: it waits for the parent's next call of the
		// creator, which was read late.
		name: "waits across the parent's idle time",
		script: `
1 enter 2 10
1 exit 12
2 start 1 2 21
2 enter 9 22
1 enter 2 20`,
		want: []string{"2<-f2@20 root f9@22"},
	}, {
		// Both children are read before their parent's events, which
		// call the creator twice, as a connection's goroutine serves
		// request after request: each child came from the call open
		// when it began, not from the first call of the creator.
		name: "a creator called again and again",
		script: `
2 start 1 2 13
2 enter 9 14
3 start 1 2 33
3 enter 9 34
1 enter 1 10
1 enter 2 11
1 exit 20
1 exit 21
1 enter 1 30
1 enter 2 31
1 exit 40
1 exit 41`,
		want: []string{"2<-f2@11 root f9@14", "3<-f2@31 root f9@34"},
	}, {
		// The child began after the call of the creator ended, and
		// the parent had nothing open then: that call stands.
		name: "began after its creator returned",
		script: `
2 start 1 2 25
2 enter 9 26
1 enter 2 10
1 exit 20
1 enter 5 30
1 exit 31`,
		want: []string{"2<-f2@10 root f9@26"},
	}, {
		// The child's record is read while the parent, as read so far,
		// is deep in a recursion that had returned when the child
		// began (its exits were written after the record): the
		// parent's next event after the child began says what was
		// open, not the stack as read.
		name: "a stack read before the parent's exits",
		script: `
1 enter 1 10
1 enter 2 11
1 enter 2 12
2 start 1 7 20
2 enter 9 21
1 exit 13
1 exit 14
1 enter 3 25
1 exit 26`,
		want: []string{"2<-f1@10 root f9@21"},
	}, {
		// The same, with no call of the parent's open when the child
		// began: none started it.
		name: "a stack read before the parent's last exit",
		script: `
1 enter 1 10
1 enter 2 11
2 start 1 7 20
2 enter 9 21
1 exit 13
1 exit 14`,
		want: []string{"2<-? root f9@21"},
	}, {
		// And with the parent's next call after it went idle begun
		// before the child: that call started it.
		name: "a stack read before the parent's exits and next call",
		script: `
1 enter 1 10
2 start 1 7 20
2 enter 9 21
1 exit 13
1 enter 4 15
1 exit 30`,
		want: []string{"2<-f4@15 root f9@21"},
	}, {
		// The creator's call returned, and the parent is in another
		// call, when the child began: the latest call of the creator
		// before it started it, not the call open then.
		name: "its creator returned, the parent in another call",
		script: `
2 start 1 2 25
2 enter 9 26
1 enter 1 10
1 enter 2 11
1 exit 20
1 enter 5 21
1 exit 40
1 exit 41`,
		want: []string{"2<-f2@11 root f9@26"},
	}, {
		// The same, the creator's call read before the child's record
		// (a worker whose first traced call came long after): the
		// call of the creator an open call made.
		name: "its creator returned before the record was read",
		script: `
1 enter 1 10
1 enter 2 11
1 exit 20
1 enter 5 21
1 enter 6 22
1 exit 23
2 start 1 2 25
2 enter 9 26
1 exit 40
1 exit 41`,
		want: []string{"2<-f2@11 root f9@26"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := run(t, 0, tt.script); !slices.Equal(got, tt.want) {
				t.Errorf("links\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestBounded has more goroutines wait than the Linker holds: they are
// given as far as known, each once, and the next are linked as usual.
func TestBounded(t *testing.T) {
	got := run(t, 2, `
2 start 1 2 15
3 start 1 2 16
4 start 1 2 17
1 enter 2 10
4 enter 9 18`)
	slices.Sort(got[:2])
	want := []string{"2<-? root ?", "3<-? root ?", "4<-f2@10 root f9@18"}
	if !slices.Equal(got, want) {
		t.Errorf("links\n%q\nwant\n%q", got, want)
	}
}

// TestLinkerBounded: a parent in one long call starts goroutine after
// goroutine, each read before the parent's next event: no more than
// maxEarly children wait on it, and each is tied to that call.
func TestLinkerBounded(t *testing.T) {
	const max, children = 1 << 12, 5 * maxEarly
	var from []string
	l := New(max, func(k *Link[string]) { from = append(from, k.From) })
	parent := &stack{fns: []uint32{1}, starts: []int64{10}, callees: [][]string{nil}, latest: 10}
	for g := uint64(2); g < 2+children; g++ {
		l.Started(g, 1, 7, int64(10+g), parent, &parent.pending)
		child := &stack{}
		l.Enter(g, &child.pending, 9, int64(11+g), name(9, int64(11+g)), child)
		if n := len(parent.pending.links); n > maxEarly {
			t.Fatalf("after %d children, %d wait on the parent", g-1, n)
		}
	}
	l.Exit(&parent.pending, 5000, parent)
	l.Flush()
	if len(from) != children {
		t.Fatalf("%d links, want %d", len(from), children)
	}
	for i, f := range from {
		if f != "f1@10" {
			t.Fatalf("link %d from %q, want f1@10", i, f)
		}
	}
}

// TestLinkerStaleThousands: a parent's stack read behind its children:
// it shows main calling phase1 (f2), returned by the time phase2 (f3)
// started 2,000 goroutines, whose records are read before the parent's
// exit of phase1 and enter of phase2 (written in another ring). Each is
// tied to phase2, not to the call the stale stack showed.
func TestLinkerStaleThousands(t *testing.T) {
	const children = 2000
	var from []string
	l := New(1<<12, func(k *Link[string]) { from = append(from, k.From) })
	parent := &stack{fns: []uint32{1, 2}, starts: []int64{0, 10}, callees: [][]string{nil, nil}, latest: 20}
	for g := uint64(2); g < 2+children; g++ {
		l.Started(g, 1, 3, int64(100+g), parent, &parent.pending)
		child := &stack{}
		l.Enter(g, &child.pending, 9, int64(101+g), name(9, int64(101+g)), child)
	}
	// phase1 returns at 50; phase2, entered at 60, is open through the
	// children's start and returns at 5000.
	parent.fns, parent.starts, parent.callees = parent.fns[:1], parent.starts[:1], [][]string{{name(2, 10)}}
	l.Exit(&parent.pending, 50, parent)
	l.Enter(1, &parent.pending, 3, 60, name(3, 60), parent)
	parent.fns, parent.starts, parent.callees = []uint32{1, 3}, []int64{0, 60}, [][]string{{name(2, 10)}, nil}
	l.Exit(&parent.pending, 5000, parent)
	l.Flush()
	if len(from) != children {
		t.Fatalf("%d links, want %d", len(from), children)
	}
	for i, f := range from {
		if f != "f3@60" {
			t.Fatalf("link %d from %q, want f3@60 (phase2)", i, f)
		}
	}
}

// BenchmarkLinkerWaiting: a parent whose children's records are read
// before its own first call (thousands then wait for it), and then more
// before its next event, each read early. Every child costs the Linker a
// constant: ns/op is per child, whatever the number of children (a pass
// over the parent's children for each early one made 65,536 goroutines
// take 27 s).
//
//	go test -run '^$' -bench LinkerWaiting ./internal/spawn
func BenchmarkLinkerWaiting(b *testing.B) {
	for _, n := range []int{1 << 12, 1 << 16} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			linked := 0
			l := New(0, func(*Link[string]) { linked++ })
			b.ReportAllocs()
			start := time.Now()
			for i := range b.N {
				parent := uint64(i+1) << 32
				st := &stack{}
				at := int64(1)
				for g := range n / 2 {
					l.Started(parent+uint64(g)+1, parent, 1, at, nil, nil)
					at++
				}
				l.Enter(parent, &st.pending, 1, 0, "f1@0", st)
				st.fns, st.starts, st.callees, st.latest = []uint32{1}, []int64{0}, [][]string{nil}, 0
				for g := n / 2; g < n; g++ {
					l.Started(parent+uint64(g)+1, parent, 1, at, st, &st.pending)
					at++
				}
				l.Exit(&st.pending, at, st)
				l.Idle(parent, &st.pending, 1, "f1@0")
				l.Flush()
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*n), "ns/child")
		})
	}
}

// BenchmarkLinkerLoop: a parent in one long call starts goroutines in a
// loop, calling a function between two go statements; its children's
// records are read ahead of its events, a chunk at a time, from two
// rings (out of order). Each of its events settles a child or two:
// ns/op is per child, whatever the number of children (a pass over the
// children waiting at each event made 200,000 goroutines of such a
// program take report 11-13 s).
//
//	go test -run '^$' -bench LinkerLoop ./internal/spawn
func BenchmarkLinkerLoop(b *testing.B) {
	const chunk = 512
	for _, n := range []int{1 << 12, 1 << 16} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			l := New(0, func(*Link[string]) {})
			b.ReportAllocs()
			start := time.Now()
			for i := range b.N {
				parent := uint64(i+1) << 32
				st := &stack{}
				l.Enter(parent, &st.pending, 1, 0, "f1@0", st)
				st.fns, st.starts, st.callees = []uint32{1}, []int64{0}, [][]string{nil}
				for c := 0; c < n; c += chunk {
					// The children of the chunk, each starting a
					// little after its go statement (at 10*g+5), the
					// two rings' records in turns.
					for _, half := range []int{0, 1} {
						for g := c + half; g < c+chunk; g += 2 {
							l.Started(parent+uint64(g)+1, parent, 1, int64(10*g+5), st, &st.pending)
						}
					}
					// The parent's calls of f2 between them.
					for g := c; g < c+chunk; g++ {
						l.Enter(parent, &st.pending, 2, int64(10*g+7), "f2", st)
						st.latest = int64(10*g + 7)
						l.Exit(&st.pending, int64(10*g+8), st)
						st.latest = int64(10*g + 8)
					}
				}
				l.Idle(parent, &st.pending, 1, "f1@0")
				l.Flush()
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*n), "ns/child")
		})
	}
}
