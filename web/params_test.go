package web

import (
	"net/url"
	"testing"
	"time"
)

func TestParams(t *testing.T) {
	for _, tc := range []struct {
		query string
		ok    bool
		check func(f *paramsResult) bool
	}{
		{"", true, func(r *paramsResult) bool { return r.g == 0 && r.min == 0 }},
		{"g=7&D=3&t=1ms&window=1ms-2ms", true, func(r *paramsResult) bool {
			return r.g == 7 && r.depth == 3 && r.min == time.Millisecond && r.from == time.Millisecond && r.to == 2*time.Millisecond
		}},
		{"t=2500", true, func(r *paramsResult) bool { return r.min == 2500 }},
		{"F=main%5C.D&N=fmt", true, func(r *paramsResult) bool { return r.focus && r.hide }},
		{"g=x", false, nil},
		{"g=-1", false, nil},
		{"D=-2", false, nil},
		{"t=soon", false, nil},
		{"t=-1s", false, nil},
		{"F=(", false, nil},
		{"window=2s-1s", false, nil},
		{"window=nope", false, nil},
	} {
		q, err := url.ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		r, err := parseFilter(q)
		if (err == nil) != tc.ok {
			t.Errorf("%q: error %v, want ok=%v", tc.query, err, tc.ok)
			continue
		}
		if tc.ok && !tc.check(r) {
			t.Errorf("%q: got %+v", tc.query, *r)
		}
	}
}

type paramsResult struct {
	g           uint64
	depth       int
	min         time.Duration
	from, to    time.Duration
	focus, hide bool
}

func parseFilter(q url.Values) (*paramsResult, error) {
	p := &params{q: q}
	f := p.filter()
	if p.err != nil {
		return nil, p.err
	}
	return &paramsResult{f.G, f.MaxDepth, f.MinTime, f.From, f.To, f.Focus != nil, f.Hide != nil}, nil
}

// FuzzParams checks that no query string makes the parameter parsing
// panic, and that what it accepts is within bounds.
func FuzzParams(f *testing.F) {
	for _, s := range []string{"g=1&F=main&N=x&D=2&t=1ms&window=1s-2s", "from=0&to=100&px=800&lanes=0-10", "t=9223372036854775807", "D=%ff", "window=-", "px=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := url.ParseQuery(s)
		if err != nil {
			return
		}
		p := &params{q: q}
		fl := p.filter()
		px := p.int("px", 1000, 1, maxPixels)
		if p.err != nil {
			return
		}
		if fl.MaxDepth < 0 || fl.MinTime < 0 || px < 1 || px > maxPixels || (fl.To != 0 && fl.To <= fl.From) {
			t.Errorf("%q accepted as %+v, px %d", s, fl, px)
		}
	})
}
