package web

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

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

// dur reads a duration such as 1ms, or a number of nanoseconds.
func (p *params) dur(name string) time.Duration {
	s := p.q.Get(name)
	if s == "" {
		return 0
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil && v >= 0 {
		return time.Duration(v)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		p.fail(name, "a duration such as 1ms")
		return 0
	}
	return d
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

// maxRegexp bounds the length of a regular expression in a request.
const maxRegexp = 1000

func (p *params) regexp(name string) *regexp.Regexp {
	s := p.q.Get(name)
	if s == "" {
		return nil
	}
	if len(s) > maxRegexp {
		p.fail(name, fmt.Sprintf("a regular expression of at most %d bytes", maxRegexp))
		return nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		p.fail(name, "a regular expression")
		return nil
	}
	return re
}

// filter reads the command line's filters: g, F, N, D, t and window.
func (p *params) filter() *filter.Filter {
	f := &filter.Filter{
		G:        uint64(p.int("g", 0, 0, 1<<62)),
		Focus:    p.regexp("F"),
		Hide:     p.regexp("N"),
		MaxDepth: int(p.int("D", 0, 0, 1<<16)),
		MinTime:  p.dur("t"),
	}
	if w := p.q.Get("window"); w != "" {
		var err error
		if f.From, f.To, err = filter.ParseWindow(w); err != nil {
			p.fail("window", "FROM-TO, such as 1s-2.5s, 100ms- or -2s")
		}
	}
	return f
}
