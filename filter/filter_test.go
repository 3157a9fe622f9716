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
