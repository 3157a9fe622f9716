package analysis

import (
	"io"
	"sort"
	"time"

	"github.com/calltrail/calltrail/tracefile"
)

// FuncStat is what a trace says of one function.
type FuncStat struct {
	Name  string
	Calls uint64
	// Total is the wall time of its calls, a recursive call counted once:
	// the time of the outermost call only.
	Total time.Duration
	// Self is the time spent in the function itself, not in traced
	// functions it called.
	Self   time.Duration
	Max    time.Duration
	Panics uint64
}

type open struct {
	fn       uint32
	children int64 // time of traced calls made from this one
}

// Funcs reads all of r and returns the functions called, the most self
// time first, and the error that stopped reading (nil at a clean end).
func Funcs(r *tracefile.Reader) ([]FuncStat, error) {
	stats := map[uint32]*FuncStat{}
	stacks := map[uint64][]open{}
	active := map[uint64]map[uint32]int{} // per goroutine: open calls of each function
	var err error
	for {
		var ev tracefile.Event
		ev, err = r.Next()
		if err != nil {
			break
		}
		switch ev.Kind {
		case tracefile.EnterEvent:
			stacks[ev.G] = append(stacks[ev.G], open{fn: ev.Func})
			a := active[ev.G]
			if a == nil {
				a = map[uint32]int{}
				active[ev.G] = a
			}
			a[ev.Func]++
		case tracefile.ExitEvent:
			st := stacks[ev.G]
			if len(st) == 0 {
				continue
			}
			top := st[len(st)-1]
			st = st[:len(st)-1]
			d := ev.Time - ev.Start
			s := stats[ev.Func]
			if s == nil {
				s = &FuncStat{Name: r.Func(ev.Func).Name}
				stats[ev.Func] = s
			}
			s.Calls++
			s.Self += time.Duration(d - top.children)
			s.Max = max(s.Max, time.Duration(d))
			if ev.Exit == tracefile.Panic {
				s.Panics++
			}
			a := active[ev.G]
			a[ev.Func]--
			if a[ev.Func] == 0 {
				s.Total += time.Duration(d) // the outermost call of a recursion
				delete(a, ev.Func)
			}
			if len(st) > 0 {
				st[len(st)-1].children += d
				stacks[ev.G] = st
			} else {
				delete(stacks, ev.G)
				delete(active, ev.G)
			}
		}
	}
	if err == io.EOF {
		err = nil
	}
	out := make([]FuncStat, 0, len(stats))
	for _, s := range stats {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Self != out[j].Self {
			return out[i].Self > out[j].Self
		}
		return out[i].Name < out[j].Name
	})
	return out, err
}
