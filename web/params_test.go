package web

import (
	"net/url"
	"testing"
	"time"
)

// TestParams: the URL's filters are the command line's (filter.Parse
// has the cases), and a malformed one is named as a parameter.
func TestParams(t *testing.T) {
	p := &params{q: url.Values{"g": {"7"}, "D": {"3"}, "t": {"1ms"}}}
	if f := p.filter(); p.err != nil || f.G != 7 || f.MaxDepth != 3 || f.MinTime != time.Millisecond {
		t.Errorf("filter %+v, error %v", f, p.err)
	}
	p = &params{q: url.Values{"g": {"x"}}}
	if p.filter(); p.err == nil || p.err.Error() != "parameter g: want a goroutine id such as 1" {
		t.Errorf("g=x: error %v", p.err)
	}
}

// FuzzParams checks that no query string makes the parameter parsing
// panic, and that what it accepts is within bounds.
func FuzzParams(f *testing.F) {
	for _, s := range []string{"g=1&F=main&N=x&D=2&t=1ms&window=1s-2s", "from=0&to=100&px=800&lanes=0-10", "t=9223372036854775807", "D=%ff", "window=-", "px=0",
		"trace-id=4bf92f3577b34da6a3ce929d0e0e4736&span=%5EGET", "trace-id=4BF9&span=(", "span=db&top=1001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := url.ParseQuery(s)
		if err != nil {
			return
		}
		p := &params{q: q}
		fl := p.filter()
		req := p.requests()
		px := p.int("px", 1000, 1, maxPixels)
		if p.err != nil {
			return
		}
		if fl.MaxDepth < 0 || fl.MinTime < 0 || px < 1 || px > maxPixels || (fl.To != 0 && fl.To <= fl.From) {
			t.Errorf("%q accepted as %+v, px %d", s, fl, px)
		}
		// The views the other filters do not apply to read the same
		// requests.
		if req.TraceID != fl.TraceID || (req.Span == nil) != (fl.Span == nil) || req.Span != nil && req.Span.String() != fl.Span.String() {
			t.Errorf("%q: requests %+v, filter %+v", s, req, fl)
		}
	})
}
