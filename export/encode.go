package export

import (
	"bufio"
	"io"
	"slices"

	"github.com/google/pprof/profile"
)

// An encoder writes a profile.proto message as it is made: each sample
// when Profile's walk gives it, the rest at the end. The pprof package
// encodes a profile it holds whole, and that costs, for a trace of tens
// of thousands of goroutines, a few hundred bytes a sample beside the
// sample itself: 2.9 GB for the 5.3 million samples of one test binary's
// trace. Protocol buffers let a message's fields come in any order, and
// a repeated field's elements among other fields, so the samples can go
// out first and the tables they point into (locations, functions,
// strings) follow. The encoder writes only the fields Profile's profiles
// have; the tests read its output back with the pprof package's parser.
type encoder struct {
	w       *bufio.Writer
	err     error
	strings map[string]int64 // the string table, by string
	table   []string
	msg     []byte   // a field being written
	made    []byte   // a sample being made
	sub     []byte   // a packed field of it
	ids     []uint64 // its location ids
}

func newEncoder(w io.Writer) *encoder {
	e := &encoder{w: bufio.NewWriterSize(w, 1<<16), strings: map[string]int64{}}
	e.str("") // the string table starts with ""
	return e
}

// The fields of profile.proto that Profile's profiles have.
const (
	profileSampleType        = 1
	profileSample            = 2
	profileLocation          = 4
	profileFunction          = 5
	profileStringTable       = 6
	profileDurationNanos     = 10
	profilePeriodType        = 11
	profilePeriod            = 12
	profileDefaultSampleType = 14

	valueTypeType = 1
	valueTypeUnit = 2

	sampleLocationID = 1
	sampleValue      = 2
	sampleLabel      = 3

	labelKey = 1
	labelStr = 2
	labelNum = 3

	locationID   = 1
	locationLine = 4

	lineFunctionID = 1
	lineLine       = 2

	functionID         = 1
	functionName       = 2
	functionSystemName = 3
	functionFilename   = 4
	functionStartLine  = 5
)

// str returns s's index in the string table, adding it if new.
func (e *encoder) str(s string) int64 {
	if i, ok := e.strings[s]; ok {
		return i
	}
	i := int64(len(e.table))
	e.strings[s] = i
	e.table = append(e.table, s)
	return i
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendInt appends field f of wire type varint, unless v is zero, the
// default a decoder assumes.
func appendInt(b []byte, f int, v int64) []byte {
	if v == 0 {
		return b
	}
	return appendVarint(appendVarint(b, uint64(f)<<3), uint64(v))
}

// appendBytes appends field f of wire type length-delimited.
func appendBytes(b []byte, f int, v []byte) []byte {
	b = appendVarint(appendVarint(b, uint64(f)<<3|2), uint64(len(v)))
	return append(b, v...)
}

// appendPacked appends the repeated varint field f, packed.
func appendPacked[T int64 | uint64](b, scratch []byte, f int, vs []T) ([]byte, []byte) {
	scratch = scratch[:0]
	for _, v := range vs {
		scratch = appendVarint(scratch, uint64(v))
	}
	return appendBytes(b, f, scratch), scratch
}

// field writes field f of the profile, a message held in b.
func (e *encoder) field(f int, b []byte) {
	if e.err != nil {
		return
	}
	e.msg = appendBytes(e.msg[:0], f, b)
	_, e.err = e.w.Write(e.msg)
}

// sample writes s: its locations, values and labels, in the order of
// their keys. As the pprof package writes them, fields that are zero are
// left out, and so are labels of value "" or 0.
func (e *encoder) sample(s *profile.Sample) {
	e.ids = e.ids[:0]
	for _, l := range s.Location {
		e.ids = append(e.ids, l.ID)
	}
	b, sub := appendPacked(e.made[:0], e.sub, sampleLocationID, e.ids)
	b, e.sub = appendPacked(b, sub, sampleValue, s.Value)
	for _, k := range sortedKeys(s.Label) {
		for _, v := range s.Label[k] {
			l := appendInt(appendInt(nil, labelKey, e.str(k)), labelStr, e.str(v))
			b = appendBytes(b, sampleLabel, l)
		}
	}
	for _, k := range sortedKeys(s.NumLabel) {
		for _, v := range s.NumLabel[k] {
			l := appendInt(appendInt(nil, labelKey, e.str(k)), labelNum, v)
			b = appendBytes(b, sampleLabel, l)
		}
	}
	e.made = b
	e.field(profileSample, b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (e *encoder) valueType(vt *profile.ValueType) []byte {
	return appendInt(appendInt(nil, valueTypeType, e.str(vt.Type)), valueTypeUnit, e.str(vt.Unit))
}

// finish writes all of p but its samples, which sample wrote, and the
// string table last, and flushes.
func (e *encoder) finish(p *profile.Profile) error {
	for _, vt := range p.SampleType {
		e.field(profileSampleType, e.valueType(vt))
	}
	for _, l := range p.Location {
		b := appendInt(nil, locationID, int64(l.ID))
		for _, ln := range l.Line {
			var fid uint64
			if ln.Function != nil {
				fid = ln.Function.ID
			}
			b = appendBytes(b, locationLine, appendInt(appendInt(nil, lineFunctionID, int64(fid)), lineLine, ln.Line))
		}
		e.field(profileLocation, b)
	}
	for _, f := range p.Function {
		b := appendInt(nil, functionID, int64(f.ID))
		b = appendInt(b, functionName, e.str(f.Name))
		b = appendInt(b, functionSystemName, e.str(f.SystemName))
		b = appendInt(b, functionFilename, e.str(f.Filename))
		b = appendInt(b, functionStartLine, f.StartLine)
		e.field(profileFunction, b)
	}
	var head []byte
	if p.PeriodType != nil {
		e.field(profilePeriodType, e.valueType(p.PeriodType))
	}
	head = appendInt(head, profileDurationNanos, p.DurationNanos)
	head = appendInt(head, profilePeriod, p.Period)
	head = appendInt(head, profileDefaultSampleType, e.str(p.DefaultSampleType))
	if e.err == nil {
		_, e.err = e.w.Write(head)
	}
	for _, s := range e.table {
		e.field(profileStringTable, []byte(s))
	}
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}
