package tracefile

import (
	"github.com/calltrail/calltrail/internal/wire"
)

// Value kinds only the reader sees: the writer names bytesValue by its
// number.
const (
	bytesValue   = ValueKind(wire.ValueBytes) // eight bytes of the string before
	maxValueKind = bytesValue + 1
)

var _ = [1]struct{}{}[bytesValue-NilValue-1] // right after the kinds a Value holds
