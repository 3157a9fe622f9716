package words

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Count(0, "call"), "0 calls"},
		{Count(1, "call"), "1 call"},
		{Count(uint64(2), "goroutine"), "2 goroutines"},
		{Count(int32(1), "package"), "1 package"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
