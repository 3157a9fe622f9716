package diagnose

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/tracefile"
)

// script builds a tracetest script of calls on goroutine 1, one at a
// time, each a microsecond long.
type script struct {
	b strings.Builder
	t int64
}

// call adds a call of path's functions, nested, the innermost returning
// the errors given, outermost last ("" for none).
func (s *script) call(path []string, errs ...string) {
	for _, f := range path {
		fmt.Fprintf(&s.b, "1 +%s %d\n", f, s.t)
		s.t += 1000
	}
	for i := range path {
		exit := "-"
		if i < len(errs) && errs[i] != "" {
			exit += errs[i]
		}
		fmt.Fprintf(&s.b, "1 %s %d\n", exit, s.t)
		s.t += 1000
	}
}

func analyse(t *testing.T, s *script) *analysis.Profile {
	t.Helper()
	data, err := tracetest.Build(s.b.String())
	if err != nil {
		t.Fatal(err)
	}
	r, err := tracefile.NewReader(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return analysis.Analyze(r, analysis.Options{})
}

func TestErrorFindings(t *testing.T) {
	tests := []struct {
		name string
		s    func(s *script)
		want string // the findings about errors, one a line: a regular expression
	}{
		{
			name: "failing through one chain",
			s: func(s *script) {
				for range 3 {
					s.call([]string{"main.A", "main.D"}, "bad")
					s.call([]string{"main.B", "main.D"})
				}
				s.call([]string{"main.C", "main.D"}, "odd") // one call: too few to say
			},
			want: regexp.QuoteMeta(`main.D failed in 3 of its 3 calls through main.A, and never in 3 calls through main.B: always *errors.errorString "bad"`),
		},
		{
			name: "failing through every chain",
			s: func(s *script) {
				for range 3 {
					s.call([]string{"main.A", "main.D"}, "bad")
					s.call([]string{"main.B", "main.D"}, "bad")
				}
			},
		},
		{
			// The caller can return an error (it returned io.EOF once), and
			// returned none when the callee failed.
			name: "dropped in a loop",
			s: func(s *script) {
				for i := range hotErrors {
					s.call([]string{"main.loop", "main.isMap"}, fmt.Sprintf("not-a-map:%d", i%3))
				}
				s.call([]string{"main.loop"}, "EOF")
			},
			want: regexp.QuoteMeta(`main.isMap returned an error in 1000 of its 1000 calls, and its caller main.loop carried on without it: ` +
				`each error is built (3 distinct, for example *errors.errorString "not-a-map:0") and dropped; test for the case without making an error, or return a sentinel error`),
		},
		{
			// A caller that never returned an error may have none to
			// return (a handler answering 404 with it): the finding
			// does not say the errors were dropped.
			name: "a caller without errors",
			s: func(s *script) {
				for i := range hotErrors {
					s.call([]string{"main.handle", "main.getOrder"}, fmt.Sprintf("no-order:%d", i%3))
				}
			},
			want: regexp.QuoteMeta(`main.getOrder returned an error in 1000 of its 1000 calls, and its caller main.handle returned none in turn: if it drops them, ` +
				`each error is built (3 distinct, for example *errors.errorString "no-order:0") for nothing; test for the case without making an error, or return a sentinel error`),
		},
		{
			name: "passed on",
			s: func(s *script) {
				for range hotErrors {
					s.call([]string{"main.loop", "main.isMap"}, "no", "no")
				}
			},
		},
		{
			name: "growing",
			s: func(s *script) {
				for i := range 100 {
					err := ""
					if i >= 50 && i%2 == 0 {
						err = "full"
					}
					s.call([]string{"main.D"}, err)
				}
			},
			// The halves are of eight spans of time: the middle one
			// counts in the first.
			want: `^main\.D failed in 1?[0-9]% of its calls in the first half of the run and 50% in the second \([0-9]+ and [0-9]+ calls\): errors grow with the run; always \*errors\.errorString "full"$`,
		},
		{
			name: "steady",
			s: func(s *script) {
				for i := range 100 {
					err := ""
					if i%2 == 0 {
						err = "full"
					}
					s.call([]string{"main.D"}, err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{}
			tt.s(s)
			p := analyse(t, s)
			var got []string
			for _, f := range Findings(p, 10, pathOf(p)) {
				if f.Kind == "errors" {
					got = append(got, f.Message)
				}
			}
			if g := strings.Join(got, "\n"); g != tt.want && (tt.want == "" || !regexp.MustCompile("^(?:"+tt.want+")$").MatchString(g)) {
				t.Errorf("findings about errors:\n%s\nwant:\n%s", g, tt.want)
			}
		})
	}
}

// pathOf writes chains for the tests as their functions' names, where
// the query layer folds them.
func pathOf(p *analysis.Profile) func(...*analysis.Node) []string {
	return func(ns ...*analysis.Node) []string {
		var out []string
		for _, n := range ns {
			var names []string
			for _, id := range n.Path() {
				names = append(names, p.Name(id))
			}
			out = append(out, strings.Join(names, " -> "))
		}
		return out
	}
}
