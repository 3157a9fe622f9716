package tracefile

import (
	"fmt"
)

// readCoverage decodes a coverage chunk's payload.
func readCoverage(d *dec) (Coverage, error) {
	c := Coverage{Package: d.string()}
	// Every entry takes at least a byte: a count beyond the bytes left
	// is damage, not a reason to allocate.
	count := func() int {
		n := d.uvarint()
		if d.err == nil && n > uint64(len(d.p)) {
			d.err = fmt.Errorf("%w: coverage count %d beyond its chunk", ErrCorrupt, n)
		}
		return int(n)
	}
	n := count()
	for i := 0; i < n && d.err == nil; i++ {
		c.Traced = append(c.Traced, d.string())
	}
	n = count()
	for i := 0; i < n && d.err == nil; i++ {
		o := Omitted{Name: d.string(), File: d.string()}
		o.Line = int(d.uvarint() & (1<<31 - 1))
		o.Why, o.Detail = d.string(), d.string()
		c.Omitted = append(c.Omitted, o)
	}
	n = count()
	for i := 0; i < n && d.err == nil; i++ {
		c.Untraced = append(c.Untraced, Untraced{Path: d.string(), Why: d.string()})
	}
	return c, d.finish("coverage")
}

// Coverage returns what the build traced of each package that says so,
// read so far: empty for a program instrumented in its source, or built
// before traces said what they cover.
func (rd *Reader) Coverage() []Coverage { return rd.coverage }
