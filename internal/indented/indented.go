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
func AppendDuration(b []byte, d time.Duration) []byte {
	return append(b, Round(d).String()...)
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
