package web

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/calltrail/calltrail/filter"
)

// params reads a request's query parameters, remembering the first
// malformed one: handlers read what they need, then check err once and
// answer 400 with its message.
type params struct {
	q   url.Values
	err error
}

func (p *params) fail(name, want string) {
	if p.err == nil {
		p.err = fmt.Errorf("parameter %s: want %s", name, want)
	}
}

// int reads an integer in [lo, hi], def when absent.
func (p *params) int(name string, def, lo, hi int64) int64 {
	s := p.q.Get(name)
	if s == "" {
		return def
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < lo || v > hi {
		p.fail(name, fmt.Sprintf("an integer from %d to %d", lo, hi))
		return def
	}
	return v
}

// choice reads one of a few words, the first the default.
func (p *params) choice(name string, words ...string) string {
	s := p.q.Get(name)
	if s == "" {
		return words[0]
	}
	for _, w := range words {
		if s == w {
			return s
		}
	}
	p.fail(name, "one of "+strings.Join(words, ", "))
	return words[0]
}

// filter reads the command line's filters, as the command line does
// (see filter.Parse): g, F, N, D, t, window, trace-id and span.
func (p *params) filter() *filter.Filter { return p.parse(p.q.Get) }

// requests reads the filters that select requests alone, trace-id and
// span, for the views the other filters do not apply to. One of those
// given is refused, not ignored: an answer for the whole trace would
// read as one for the calls asked about. own names a parameter of the
// view that a filter shares the name of (g, the goroutine of a lane).
func (p *params) requests(own ...string) *filter.Filter {
	for _, name := range []string{"g", "F", "N", "D", "t", "window"} {
		if p.q.Get(name) != "" && !slices.Contains(own, name) && p.err == nil {
			p.err = fmt.Errorf("parameter %s: this view takes trace-id and span of the filters, not %s (its page zooms and searches itself)", name, name)
		}
	}
	return p.parse(func(name string) string {
		if name == "trace-id" || name == "span" {
			return p.q.Get(name)
		}
		return ""
	})
}

func (p *params) parse(get func(string) string) *filter.Filter {
	f, err := filter.Parse(get)
	if err != nil {
		if p.err == nil {
			p.err = fmt.Errorf("parameter %w", err)
		}
		return &filter.Filter{}
	}
	return f
}
