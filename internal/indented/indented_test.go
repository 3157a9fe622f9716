package indented

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestRound(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "0s"},
		{812, "812ns"},
		{1234, "1.23µs"},
		{12345, "12.3µs"},
		{1254 * time.Microsecond, "1.25ms"},
		{1250 * time.Microsecond, "1.25ms"},
		{999999, "1ms"},
		{2500 * time.Millisecond, "2.5s"},
		{90 * time.Second, "1m30s"},
		{-1234, "-1.23µs"},
	}
	for _, tt := range tests {
		if got := Round(tt.in).String(); got != tt.want {
			t.Errorf("Round(%d) = %s, want %s", int64(tt.in), got, tt.want)
		}
	}
}

func TestLines(t *testing.T) {
	b := AppendEnter(nil, 1, 1, "main.A1")
	b = AppendExit(b, 1, 2, "main.B1", 1254*time.Microsecond, "")
	b = AppendExit(b, 123, 1, "main.D", 80, "panic")
	want := "g[01]:\t->main.A1\ng[01]:\t\t<-main.B1 1.25ms\ng[123]:\t<-main.D 80ns (panic)\n"
	if string(b) != want {
		t.Errorf("got %q, want %q", b, want)
	}
}

// TestDeepLine: past MaxIndent levels, a line says its depth instead of
// growing.
func TestDeepLine(t *testing.T) {
	b := AppendEnter(nil, 1, 30000, "main.rec")
	want := "g[01]:" + strings.Repeat("\t", MaxIndent) + "[30000]->main.rec\n"
	if string(b) != want {
		t.Errorf("got %q, want %q", b, want)
	}
}

// TestRoundExtremes rounds the durations at the ends of int64, which a
// damaged trace can produce: without recursing for ever on the smallest.
func TestRoundExtremes(t *testing.T) {
	for _, d := range []time.Duration{math.MinInt64, math.MinInt64 + 1, math.MaxInt64, -1, 0} {
		r := Round(d)
		if (d < 0) != (r < 0) && r != 0 {
			t.Errorf("Round(%d) = %d: the sign changed", d, r)
		}
	}
}

// TestAppendDuration compares AppendDuration with the time package's
// String of the rounded duration, over durations of every size.
func TestAppendDuration(t *testing.T) {
	ds := []time.Duration{0, 1, -1, 999, 1000, 1001, 1050, 999_999, time.Millisecond, 1_000_500, time.Second,
		time.Minute, time.Hour, 90 * time.Minute, 25*time.Hour + 7*time.Second + 5*time.Millisecond,
		math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		// Every magnitude, each digit of the rounding.
		ds = append(ds, time.Duration(r.Int64N(1<<r.IntN(63)+1)-r.Int64N(2)<<r.IntN(40)))
	}
	for _, d := range ds {
		if got, want := string(AppendDuration([]byte("x"), d)), "x"+Round(d).String(); got != want {
			t.Fatalf("AppendDuration(%d) = %q, want %q", int64(d), got, want)
		}
	}
}

func FuzzAppendDuration(f *testing.F) {
	f.Add(int64(1234))
	f.Fuzz(func(t *testing.T, d int64) {
		if got, want := string(AppendDuration(nil, time.Duration(d))), Round(time.Duration(d)).String(); got != want {
			t.Fatalf("AppendDuration(%d) = %q, want %q", d, got, want)
		}
	})
}
