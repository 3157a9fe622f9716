package tracefile

import (
	"io"
	"time"

	"github.com/calltrail/calltrail/internal/gtable"
)

// Summary describes a whole trace.
type Summary struct {
	Meta       Meta
	Version    int
	Duration   time.Duration // from the start of tracing to the last event
	Goroutines int           // goroutines that made traced calls
	Funcs      int           // functions in the function table
	Called     int           // functions called: those the other verbs list
	Calls      uint64        // calls recorded
	Unfinished int           // calls still running when the trace ended
	Panics     uint64        // calls left by a panic
	Stats      Stats
	End        string // why tracing ended; empty if the trace has no end
	Bytes      int64  // size of the input read
}

// Summarize reads all of r. It returns the summary of what it could read
// and the error that stopped it, nil at a clean end of input.
func Summarize(r *Reader) (Summary, error) {
	var gs gtable.Table[struct{}]
	var called []bool // by function id
	s := Summary{Meta: r.Meta(), Version: r.Version()}
	var err error
	for {
		var ev Event
		ev, err = r.Next()
		if err != nil {
			break
		}
		gs.Put(ev.G)
		if ev.Kind == EnterEvent {
			for int(ev.Func) >= len(called) {
				called = append(called, false)
			}
			if !called[ev.Func] {
				called[ev.Func] = true
				s.Called++
			}
		}
		if ev.Kind == ExitEvent {
			switch ev.Exit {
			case Unfinished:
				s.Unfinished++
			case Panic:
				s.Panics++
			}
		}
	}
	if err == io.EOF {
		err = nil
	}
	s.Goroutines = gs.Len()
	s.Funcs = r.NumFuncs()
	s.Calls = r.Calls()
	s.Duration = time.Duration(r.MaxTime())
	s.Stats = r.Stats()
	s.End, _ = r.End()
	s.Bytes = r.Offset()
	return s, err
}
