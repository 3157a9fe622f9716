package filter

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// walk runs a call tree written as "A(B(C) D) E" through a tracker and
// returns the shown calls as name@depth.
func walk(f *Filter, tree string) string {
	names := map[string]uint32{}
	byID := []string{""}
	id := func(n string) uint32 {
		if i, ok := names[n]; ok {
			return i
		}
		names[n] = uint32(len(byID))
		byID = append(byID, n)
		return names[n]
	}
	name := func(i uint32) string { return byID[i] }
	tr := f.NewTracker()
	var out []string
	tok := strings.NewReplacer("(", " ( ", ")", " ) ").Replace(tree)
	fields := strings.Fields(tok)
	for i := 0; i < len(fields); i++ {
		switch fields[i] {
		case "(":
		case ")":
			tr.Exit()
		default:
			shown, d := tr.Enter(id(fields[i]), name)
			if shown {
				out = append(out, fmt.Sprintf("%s@%d", fields[i], d))
			}
			if i+1 >= len(fields) || fields[i+1] != "(" {
				tr.Exit()
			}
		}
	}
	return strings.Join(out, " ")
}

func TestTracker(t *testing.T) {
	tree := "main(A1(B1(C1(D))) A2(B2(C2(D))) log)"
	tests := []struct {
		name string
		f    Filter
		want string
	}{
		{"all", Filter{}, "main@1 A1@2 B1@3 C1@4 D@5 A2@2 B2@3 C2@4 D@5 log@2"},
		{"focus", Filter{Focus: regexp.MustCompile(`^B2$`)}, "B2@1 C2@2 D@3"},
		{"hide", Filter{Hide: regexp.MustCompile(`^(A1|log)$`)}, "main@1 A2@2 B2@3 C2@4 D@5"},
		{"depth", Filter{MaxDepth: 2}, "main@1 A1@2 A2@2 log@2"},
		{"focus+depth", Filter{Focus: regexp.MustCompile(`^A`), MaxDepth: 2}, "A1@1 B1@2 A2@1 B2@2"},
		{"focus+hide", Filter{Focus: regexp.MustCompile(`^A`), Hide: regexp.MustCompile(`^C2$`)}, "A1@1 B1@2 C1@3 D@4 A2@1 B2@2"},
		{"both on one", Filter{Focus: regexp.MustCompile(`^D$`), Hide: regexp.MustCompile(`^D$`)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := walk(&tt.f, tree); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestWindow(t *testing.T) {
	for _, tt := range []struct {
		in       string
		from, to time.Duration
		bad      bool
	}{
		{"1s-2.5s", time.Second, 2500 * time.Millisecond, false},
		{"100ms-", 100 * time.Millisecond, 0, false},
		{"-2s", 0, 2 * time.Second, false},
		{"2s-1s", 0, 0, true},
		{"2s", 0, 0, true},
		{"x-1s", 0, 0, true},
	} {
		from, to, err := ParseWindow(tt.in)
		if (err != nil) != tt.bad || !tt.bad && (from != tt.from || to != tt.to) {
			t.Errorf("%q: %v %v %v", tt.in, from, to, err)
		}
	}
	f := Filter{From: 10, To: 20}
	if f.InWindow(9) || !f.InWindow(10) || !f.InWindow(19) || f.InWindow(20) {
		t.Error("window bounds")
	}
}

// TestSelector follows two goroutines' calls: of goroutine 1, only
// calls under main.A (focus), starting from time 10 (window) and lasting
// 5ns at least are selected; goroutine 2 is not.
func TestSelector(t *testing.T) {
	names := map[uint32]string{1: "main.main", 2: "main.A", 3: "main.B"}
	f := &Filter{G: 1, Focus: regexp.MustCompile(`^main\.A$`), MinTime: 5, From: 10}
	s := f.Selector(func(id uint32) string { return names[id] })
	type ev struct {
		g     uint64
		enter uint32 // the function entered; 0 for an exit
		t     int64  // an enter's time, an exit's duration
		want  bool   // for exits: selected
	}
	for i, e := range []ev{
		{1, 1, 0, false},  // main: not focused
		{1, 2, 5, false},  // A, before the window
		{1, 3, 11, false}, // B in A, in the window
		{1, 0, 9, true},   // B ends after 9ns
		{1, 3, 21, false},
		{1, 0, 2, false}, // B ends after 2ns: too short
		{2, 2, 24, false},
		{2, 0, 16, false}, // goroutine 2
		{1, 0, 45, false}, // A began before the window
		{1, 0, 60, false}, // main
		{1, 0, 70, false}, // an exit with nothing open
	} {
		if e.enter != 0 {
			s.Enter(e.g, e.enter, e.t)
		} else if got := s.Exit(e.g, time.Duration(e.t)); got != e.want {
			t.Errorf("event %d: selected %v, want %v", i, got, e.want)
		}
	}
}
