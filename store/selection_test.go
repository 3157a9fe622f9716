package store

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNarrow(t *testing.T) {
	base := Selection{Service: "api", Labels: []string{"env=prod"}}
	for _, tc := range []struct {
		labels string
		want   Selection
		err    string
	}{
		{"version=1", Selection{Service: "api", Labels: []string{"env=prod", "version=1"}}, ""},
		{"service=web,version=2", Selection{Service: "web", Labels: []string{"env=prod", "version=2"}}, ""},
		{"region=eu,west", Selection{Service: "api", Labels: []string{"env=prod", "region=eu,west"}}, ""},
		{"a=1,b=2", Selection{Service: "api", Labels: []string{"env=prod", "a=1", "b=2"}}, ""},
		{"region=eu,west,version=3", Selection{Service: "api", Labels: []string{"env=prod", "region=eu,west", "version=3"}}, ""},
		{"version", Selection{}, "want labels KEY=VALUE"},
		{"=1", Selection{}, "want labels KEY=VALUE"},
	} {
		got, err := base.Narrow(tc.labels)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want an error saying %q", tc.labels, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %+v, %v; want %+v", tc.labels, got, err, tc.want)
		}
	}
	if len(base.Labels) != 1 {
		t.Errorf("Narrow changed its receiver's labels: %v", base.Labels)
	}
}

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		s    string
		want time.Time
		err  string
	}{
		{"", time.Time{}, ""},
		{"24h", now.Add(-24 * time.Hour), ""},
		{"2026-11-23T10:00:00Z", time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), ""},
		{"yesterday", time.Time{}, "want a time such as"},
		{"1000-01-01T00:00:00Z", time.Time{}, "want a time between 1678 and 2261"},
	} {
		got, err := ParseTime(tc.s, now)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want an error saying %q", tc.s, err, tc.err)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.s, got, err, tc.want)
		}
	}
}
