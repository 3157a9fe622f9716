package filter

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// TestParse: each setting's bounds, the same from a flag as from a URL.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  string // the filter, or the error's start
	}{
		{"", "g=0 F= N= D=0 t=0s window=0s-0s"},
		{"g=7&D=3&t=1ms&window=1ms-2ms", "g=7 F= N= D=3 t=1ms window=1ms-2ms"},
		{"t=2500", "g=0 F= N= D=0 t=2.5µs window=0s-0s"},
		{"F=main%5C.D&N=fmt", `g=0 F=main\.D N=fmt D=0 t=0s window=0s-0s`},
		// A generic function as calltrail writes it: the name, not a class.
		{"F=z.KeyToHash[...]", `g=0 F=z.KeyToHash\[\.\.\.\] N= D=0 t=0s window=0s-0s`},
		{"D=2147483647", "g=0 F= N= D=2147483647 t=0s window=0s-0s"},
		{"g=x", "g: want a goroutine id"},
		{"g=0", "g: want a goroutine id"},
		{"g=-1", "g: want a goroutine id"},
		{"D=-2", "D: want a depth from 0"},
		{"D=2147483648", "D: want a depth from 0"},
		{"t=soon", "t: want a duration"},
		{"t=-1s", "t: want a duration"},
		{"F=(", "F: error parsing regexp"},
		{"N=" + strings.Repeat("a", MaxRegexp+1), "N: want a regular expression of at most"},
		{"window=2s-1s", "window: the window ends before it starts"},
		{"window=nope", "window: want FROM-TO"},
		{"g=x&D=-1", "g: "}, // the first malformed one
	} {
		q, err := url.ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse(q.Get)
		var got string
		if err != nil {
			var se *SettingError
			if !errors.As(err, &se) {
				t.Errorf("%q: error %v is not a *SettingError", tc.query, err)
			}
			got = err.Error()
		} else {
			got = describe(f)
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.query, got, tc.want)
		}
	}
}

func describe(f *Filter) string {
	var focus, hide string
	if f.Focus != nil {
		focus = f.Focus.String()
	}
	if f.Hide != nil {
		hide = f.Hide.String()
	}
	return fmt.Sprintf("g=%d F=%s N=%s D=%d t=%v window=%v-%v", f.G, focus, hide, f.MaxDepth, f.MinTime, f.From, f.To)
}

// FuzzParse: no text makes Parse panic, and what it accepts is within
// its bounds.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"g=1&F=main&N=x&D=2&t=1ms&window=1s-2s", "t=9223372036854775807", "D=%ff", "window=-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := url.ParseQuery(s)
		if err != nil {
			return
		}
		fl, err := Parse(q.Get)
		if err != nil {
			return
		}
		if fl.MaxDepth < 0 || fl.MinTime < 0 || (fl.To != 0 && fl.To <= fl.From) ||
			fl.Focus != nil && len(fl.Focus.String()) > MaxRegexp || fl.Hide != nil && len(fl.Hide.String()) > MaxRegexp {
			t.Errorf("%q accepted as %+v", s, fl)
		}
	})
}
