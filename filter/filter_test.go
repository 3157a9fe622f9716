package filter

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
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
