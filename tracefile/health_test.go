package tracefile

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func TestHealth(t *testing.T) {
	cut := fmt.Errorf("%w: file ends inside a chunk", ErrTruncated)
	for _, tc := range []struct {
		name     string
		h        Health
		partial  bool
		warnings []string
		damage   string
	}{
		{"sound", Health{}, true, nil, ""},
		{"no end, drops, a profile left out", Health{NoEnd: true, Dropped: 3, Profiles: []error{errors.New("cpu profile: too thin")}}, true, []string{
			"no end record: the program was killed, is still running, or called os.Exit without calltrail's exit hook (calltrail build, run and test link it); showing what was written",
			"3 calls were dropped while recording (buffers full); figures leave them out",
			"cpu profile: too thin",
		}, ""},
		{"values lost", Health{LostValues: 47}, true, []string{
			"47 errors, arguments or results of recorded calls were left out for want of room (buffers full): those calls show no error, or fewer values, than they had",
		}, ""},
		{"cut", Health{Damage: cut, NoEnd: true}, true, []string{"no end record: the program was killed, is still running, or called os.Exit without calltrail's exit hook (calltrail build, run and test link it); showing what was written"},
			"t.out: trace is truncated: file ends inside a chunk (the output shows what came before)"},
		{"unreadable", Health{Damage: errors.New("read t.out: is a directory")}, false, nil, "t.out: read t.out: is a directory"},
	} {
		if got := tc.h.Partial(); got != tc.partial {
			t.Errorf("%s: Partial = %v", tc.name, got)
		}
		if got := tc.h.Warnings(); !reflect.DeepEqual(got, tc.warnings) {
			t.Errorf("%s: Warnings = %q, want %q", tc.name, got, tc.warnings)
		}
		var got string
		if err := tc.h.DamageError("t.out"); err != nil {
			got = err.Error()
			if !errors.Is(err, tc.h.Damage) {
				t.Errorf("%s: DamageError does not wrap the damage", tc.name)
			}
		}
		if got != tc.damage {
			t.Errorf("%s: DamageError = %q, want %q", tc.name, got, tc.damage)
		}
	}
}
