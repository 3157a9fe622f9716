package indented

import (
	"math"
	"strconv"
	"time"
)

// AppendEnter appends the line for goroutine g entering name at depth
// (1 for a goroutine's outermost traced call).
func AppendEnter(b []byte, g uint64, depth int, name string) []byte {
	b = appendPrefix(b, g, depth)
	b = append(b, "->"...)
	b = append(b, name...)
	return append(b, '\n')
}

// AppendExit appends the line for goroutine g leaving name after d. note,
// when not empty, is added in parentheses ("panic", "unfinished").
func AppendExit(b []byte, g uint64, depth int, name string, d time.Duration, note string) []byte {
	b = appendPrefix(b, g, depth)
	b = append(b, "<-"...)
	b = append(b, name...)
	b = append(b, ' ')
	b = AppendDuration(b, d)
	if note != "" {
		b = append(b, " ("...)
		b = append(b, note...)
		b = append(b, ')')
	}
	return append(b, '\n')
}

// MaxIndent is the deepest level indented by its own tab.
const MaxIndent = 64

func appendPrefix(b []byte, g uint64, depth int) []byte {
	b = append(b, "g["...)
	if g < 10 {
		b = append(b, '0')
	}
	b = strconv.AppendUint(b, g, 10)
	b = append(b, "]:"...)
	for i := 0; i < min(depth, MaxIndent); i++ {
		b = append(b, '\t')
	}
	if depth > MaxIndent {
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(depth), 10)
		b = append(b, ']')
	}
	return b
}

// AppendDuration appends d rounded to three significant digits, in the
// style of time.Duration: 812ns, 12.3µs, 1.25ms, 2.5s.
//
// It writes into b, where Round(d).String() makes a string to copy in:
// one for every exit line replay prints.
func AppendDuration(b []byte, d time.Duration) []byte {
	u := uint64(Round(d))
	if d < 0 {
		b = append(b, '-')
		u = -u
	}
	switch {
	case u == 0:
		return append(b, "0s"...)
	case u < uint64(time.Microsecond):
		return append(strconv.AppendUint(b, u, 10), "ns"...)
	case u < uint64(time.Millisecond):
		return append(appendFrac(b, u, 3), "µs"...)
	case u < uint64(time.Second):
		return append(appendFrac(b, u, 6), "ms"...)
	}
	s := u / uint64(time.Second)
	if s >= 3600 {
		b = append(strconv.AppendUint(b, s/3600, 10), 'h')
	}
	if s >= 60 {
		b = append(strconv.AppendUint(b, s/60%60, 10), 'm')
	}
	return append(appendFrac(b, u%uint64(time.Minute), 9), 's')
}

// appendFrac appends u/10^digits in decimal, its fraction without
// trailing zeros, and without a point if that leaves none.
func appendFrac(b []byte, u uint64, digits int) []byte {
	unit := uint64(1)
	for range digits {
		unit *= 10
	}
	b = strconv.AppendUint(b, u/unit, 10)
	frac := u % unit
	if frac == 0 {
		return b
	}
	for frac%10 == 0 {
		frac /= 10
		digits--
	}
	b = append(b, '.')
	for unit = 1; unit*10 <= frac; unit *= 10 {
		digits--
	}
	for ; digits > 1; digits-- {
		b = append(b, '0') // the fraction's leading zeros
	}
	return strconv.AppendUint(b, frac, 10)
}

// Round rounds d to three significant digits.
func Round(d time.Duration) time.Duration {
	if d < 0 {
		return -Round(-max(d, -math.MaxInt64)) // -MinInt64 is MinInt64
	}
	unit := time.Duration(1)
	for d >= 1000*unit && unit < time.Hour {
		unit *= 10
	}
	return d.Round(unit)
}
