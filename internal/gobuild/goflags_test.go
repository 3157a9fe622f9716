package gobuild

import (
	"reflect"
	"strings"
	"testing"
)

func TestBuildFlags(t *testing.T) {
	for _, tc := range []struct {
		user     string
		goMinor  int
		profiles string
		want     string
	}{
		{"", 22, "", "-o=x -tags=calltrail,calltrail_exithook"},
		{"", 26, "", "-o=x -tags=calltrail,calltrail_exithook -ldflags=-checklinkname=0"},
		{"-race -tags a,b --ldflags=-s -count 1", 26, "", "-race -count=1 -o=x -tags=a,b,calltrail,calltrail_exithook -ldflags=-s -checklinkname=0"},
		{"-tags=a -tags b -ldflags -w -ldflags=-s", 22, "", "-o=x -tags=a,b,calltrail,calltrail_exithook -ldflags=-w -s"},
		// -N for all packages: the runtime's hot path without inlining too.
		{"-gcflags=all=-N", 22, "", "-gcflags=all=-N -o=x -tags=calltrail,calltrail_exithook -gcflags=github.com/calltrail/calltrail=-N -l"},
		{"-gcflags=all=-N -gcflags=all=-B", 22, "", "-gcflags=all=-N -gcflags=all=-B -o=x -tags=calltrail,calltrail_exithook"},
		{"-gcflags=-N", 22, "", "-gcflags=-N -o=x -tags=calltrail,calltrail_exithook"},
		// Profiles recorded by default: a variable set by the linker.
		{"", 26, "cpu,mutex", "-o=x -tags=calltrail,calltrail_exithook -ldflags=-checklinkname=0 -X=github.com/calltrail/calltrail/internal/profhook.Default=cpu,mutex"},
		{"-ldflags=-s", 22, "block", "-o=x -tags=calltrail,calltrail_exithook -ldflags=-s -X=github.com/calltrail/calltrail/internal/profhook.Default=block"},
	} {
		got := strings.Join(buildFlags(parseGoFlags(strings.Fields(tc.user)), tc.goMinor, tc.profiles, "-o=x"), " ")
		if got != tc.want {
			t.Errorf("buildFlags(%q, go1.%d, %q) = %q, want %q", tc.user, tc.goMinor, tc.profiles, got, tc.want)
		}
	}
}

func TestRuntimeGCFlags(t *testing.T) {
	for _, tc := range []struct {
		gcflags []string
		want    string
	}{
		{nil, ""},
		{[]string{"all=-N"}, "github.com/calltrail/calltrail=-N -l"},
		{[]string{"all=-N -l"}, ""},
		{[]string{"all=-l -N"}, ""},
		{[]string{"-N"}, ""}, // the packages named only
		{[]string{"all=-N", "all=-m"}, ""},
		{[]string{"all=-m", "all=-N -m"}, "github.com/calltrail/calltrail=-N -m -l"},
	} {
		if got := runtimeGCFlags(tc.gcflags); got != tc.want {
			t.Errorf("runtimeGCFlags(%q) = %q, want %q", tc.gcflags, got, tc.want)
		}
	}
}

func TestSelectingFlags(t *testing.T) {
	user := parseGoFlags(strings.Fields("-v -mod vendor -run TestX -gcflags=all=-N -race -count 2 -pgo=off"))
	got := flagArgs(selecting(user))
	want := []string{"-mod=vendor", "-gcflags=all=-N", "-race", "-pgo=off"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("selecting = %q, want %q", got, want)
	}
	if err := ownFlags(parseGoFlags([]string{"-modfile", "x.mod"})); err == nil {
		t.Error("ownFlags accepts -modfile")
	}
}
