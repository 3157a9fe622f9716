package tracefile

import (
	"fmt"

	"github.com/calltrail/calltrail/internal/words"
)

// Health is what reading a trace found wrong with it: the one policy
// for damaged traces, which every view, on the command line and in the
// web UI, applies and says the same way. A trace without an end record
// (its program was killed, or is still running) is read whole, with a
// warning. A trace cut short inside a chunk, or damaged (a checksum that
// fails, contents that cannot be), is read up to the damage: the view
// shows what came before it, then says what was wrong; the command line
// then exits with status 1. A file that is not a trace at all is refused
// before anything is shown (NewReader's error).
type Health struct {
	// Damage is what stopped reading before the end, nil if nothing
	// did: a cut or damaged chunk (see IsIncomplete), or an error of
	// the input itself.
	Damage error
	// NoEnd says the trace has no end record.
	NoEnd bool
	// Dropped counts the calls dropped while recording (buffers full).
	Dropped uint64
	// LostSpans counts the OpenTelemetry spans not followed.
	LostSpans uint64
	// LostValues counts the errors, arguments and results of recorded
	// calls left out for want of room (Stats.LostErrors).
	LostValues uint64
	// Profiles are the runtime's profiles in the trace left out of the
	// analysis, and why.
	Profiles []error
}

// Health returns what reading found wrong with the trace, err being the
// error that stopped reading (nil or io.EOF at its end).
func (rd *Reader) Health(err error) Health {
	_, ended := rd.End()
	st := rd.Stats()
	return Health{Damage: err, NoEnd: !ended, Dropped: st.DroppedCalls, LostSpans: st.LostSpans, LostValues: st.LostErrors}
}

// Partial reports whether the damage left a readable part to show: the
// trace was cut short or damaged, rather than unreadable.
func (h Health) Partial() bool { return h.Damage == nil || IsIncomplete(h.Damage) }

// Warnings says what is wrong besides the damage, a sentence each.
func (h Health) Warnings() []string {
	var out []string
	if h.NoEnd {
		out = append(out, "no end record: the program was killed, is still running, or called os.Exit without calltrail's exit hook (calltrail build, run and test link it); showing what was written")
	}
	if h.Dropped > 0 {
		were := "were"
		if h.Dropped == 1 {
			were = "was"
		}
		out = append(out, fmt.Sprintf("%s %s dropped while recording (buffers full); figures leave them out", words.Count(h.Dropped, "call"), were))
	}
	if h.LostValues > 0 {
		out = append(out, fmt.Sprintf("%d errors, arguments or results of recorded calls were left out for want of room (buffers full): those calls show no error, or fewer values, than they had", h.LostValues))
	}
	if h.LostSpans > 0 {
		out = append(out, fmt.Sprintf("%d OpenTelemetry spans were not recorded (too many open at once, or buffers full); their calls read as outside them", h.LostSpans))
	}
	for _, err := range h.Profiles {
		out = append(out, err.Error())
	}
	return out
}

// DamageError is the damage as the command line says it, after what it
// showed of the trace named name; nil without damage.
func (h Health) DamageError(name string) error {
	switch {
	case h.Damage == nil:
		return nil
	case h.Partial():
		return fmt.Errorf("%s: %w (the output shows what came before)", name, h.Damage)
	}
	return fmt.Errorf("%s: %w", name, h.Damage)
}

// Health is what the summary of a trace (ReadSummary) says is wrong with
// it: the calls dropped. A trace with a summary has an end record; damage
// before the summary goes unseen, where Summarize would find it.
func (s Summary) Health() Health {
	return Health{Dropped: s.Stats.DroppedCalls, LostSpans: s.Stats.LostSpans, LostValues: s.Stats.LostErrors}
}
