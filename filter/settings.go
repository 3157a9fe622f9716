package filter

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// A Setting is one of a Filter's settings, as text: what the command
// line's flag and the web UI's URL parameter of the same name both give.
type Setting struct {
	Name  string // the flag's and the parameter's name: g, F, N, D, t, window
	Usage string // the flag's help; a word in back quotes names its argument
}

// Settings are a Filter's settings, in the order help lists them.
var Settings = []Setting{
	{"g", "show only goroutine `GID`"},
	{"F", "show only calls of functions matching `REGEX`, and their callees"},
	{"N", "hide calls of functions matching `REGEX`, and their callees"},
	{"D", "show calls nested at most `DEPTH` deep (0: no limit)"},
	{"t", "show only calls lasting at least `DURATION` (e.g. 1ms)"},
	{"window", "show only calls starting in `FROM-TO`, times since the trace started (1s-2.5s, 100ms-, -2s)"},
	{"trace-id", "show only calls of the request with OpenTelemetry trace id `ID` (32 hex digits), in every goroutine it used"},
	{"span", "show only calls of OpenTelemetry spans named by `REGEX`, and of the spans under them"},
}

// MaxRegexp bounds the length of the regular expressions of F and N.
const MaxRegexp = 1000

// maxDepth bounds D: deeper than any stack a trace can hold.
const maxDepth = math.MaxInt32

// A SettingError says which setting was malformed and what it wants.
type SettingError struct {
	Name string
	Err  error
}

func (e *SettingError) Error() string { return e.Name + ": " + e.Err.Error() }
func (e *SettingError) Unwrap() error { return e.Err }

// Parse makes the Filter the settings say: get returns a setting's text
// by name, "" where it was not given. Each setting has this one parser
// and one set of bounds, whether it came from a flag or from a URL. A
// malformed setting is a *SettingError; the first one is returned.
func Parse(get func(name string) string) (*Filter, error) {
	f := &Filter{}
	for _, s := range Settings {
		v := get(s.Name)
		if v == "" {
			continue
		}
		if err := f.set(s.Name, v); err != nil {
			return nil, &SettingError{s.Name, err}
		}
	}
	return f, nil
}

// set sets one setting from its text.
func (f *Filter) set(name, v string) error {
	var err error
	switch name {
	case "g":
		if f.G, err = strconv.ParseUint(v, 10, 64); err != nil || f.G == 0 {
			return errors.New("want a goroutine id such as 1")
		}
	case "F", "N":
		re, err := compile(v)
		if err != nil {
			return err
		}
		if name == "F" {
			f.Focus = re
		} else {
			f.Hide = re
		}
	case "D":
		d, err := strconv.ParseInt(v, 10, 64)
		if err != nil || d < 0 || d > maxDepth {
			return fmt.Errorf("want a depth from 0 to %d", maxDepth)
		}
		f.MaxDepth = int(d)
	case "t":
		if f.MinTime, err = parseDuration(v); err != nil {
			return err
		}
	case "window":
		if f.From, f.To, err = ParseWindow(v); err != nil {
			return err
		}
	case "trace-id":
		b, err := hex.DecodeString(v)
		if err != nil || len(b) != 16 || strings.Count(v, "0") == 32 {
			return errors.New("want a trace id of 32 hex digits, not all zero, such as 4bf92f3577b34da6a3ce929d0e0e4736")
		}
		f.TraceID = strings.ToLower(v)
	case "span":
		if f.Span, err = compile(v); err != nil {
			return err
		}
	}
	return nil
}

func compile(s string) (*regexp.Regexp, error) {
	if len(s) > MaxRegexp {
		return nil, fmt.Errorf("want a regular expression of at most %d bytes", MaxRegexp)
	}
	// "[...]" is how calltrail writes a generic function's type
	// parameters: as a pattern it would be a class of one '.', which no
	// one means. It matches the name as written.
	return regexp.Compile(strings.ReplaceAll(s, "[...]", `\[\.\.\.\]`))
}

// parseDuration reads a duration such as 1ms, or a whole number of
// nanoseconds; never a negative one.
func parseDuration(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		return time.Duration(n), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, errors.New("want a duration such as 1ms")
	}
	return d, nil
}
