package tracewrite

import (
	"encoding/binary"

	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/wire"
)

// AppendCoverage appends the payload of a coverage chunk describing c.
func AppendCoverage(p []byte, c records.Coverage) []byte {
	p = appendString(p, c.Package)
	p = binary.AppendUvarint(p, uint64(len(c.Traced)))
	for _, name := range c.Traced {
		p = appendString(p, name)
	}
	p = binary.AppendUvarint(p, uint64(len(c.Omitted)))
	for _, o := range c.Omitted {
		p = appendString(p, o.Name)
		p = appendString(p, o.File)
		p = binary.AppendUvarint(p, uint64(o.Line))
		p = appendString(p, o.Why)
		p = appendString(p, o.Detail)
	}
	p = binary.AppendUvarint(p, uint64(len(c.Untraced)))
	for _, u := range c.Untraced {
		p = appendString(p, u.Path)
		p = appendString(p, u.Why)
	}
	return p
}

// Coverage appends a coverage chunk whose payload AppendCoverage made.
func (e *Encoder) Coverage(payload []byte) {
	p := e.begin(wire.ChunkCoverage)
	p = append(p, payload...)
	e.end(p)
}
