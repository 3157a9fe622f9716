package store

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// ParseLabel reads a label, KEY=VALUE, as a push takes it and a
// Selection chooses by it.
func ParseLabel(s string) (k, v string, err error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return "", "", errors.New("want KEY=VALUE")
	}
	return k, v, nil
}

// Narrow returns sel narrowed by labels, KEY=VALUE[,KEY=VALUE], of which
// service=NAME chooses a service: one side of a diff of two sets of
// traces. A comma starts another label only where what follows it has a
// key: region=eu,west is one label, whose value has a comma, as a push
// with the label region=eu,west made it.
func (sel Selection) Narrow(labels string) (Selection, error) {
	sel.Labels = append([]string{}, sel.Labels...)
	var parts []string
	for _, part := range strings.Split(labels, ",") {
		if len(parts) > 0 && !strings.Contains(part, "=") {
			parts[len(parts)-1] += "," + part
			continue
		}
		parts = append(parts, part)
	}
	for _, l := range parts {
		k, v, err := ParseLabel(l)
		switch {
		case err != nil:
			return sel, fmt.Errorf("%q: want labels KEY=VALUE[,KEY=VALUE], or service=NAME", labels)
		case k == "service":
			sel.Service = v
		default:
			sel.Labels = append(sel.Labels, l)
		}
	}
	return sel, nil
}

// ParseTime reads the time of --since or --until: RFC 3339, or a
// duration before now; "" is no bound, the zero Time.
func ParseTime(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want a time such as 2026-11-23T10:00:00Z or a duration such as 24h", s)
	}
	// The store keeps times as nanoseconds since 1970 in 64 bits: a time
	// out of their range would select nothing, and say nothing of it.
	if t.Before(minTime) || t.After(maxTime) {
		return time.Time{}, fmt.Errorf("%q: want a time between %d and %d", s, minTime.Year()+1, maxTime.Year()-1)
	}
	return t, nil
}

// minTime and maxTime bound the times 64-bit nanoseconds since 1970 hold.
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)
