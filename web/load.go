package web

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/diagnose"
	"github.com/calltrail/calltrail/tracefile"
)

// slowest is how many of the slowest calls each chain keeps for the
// function view.
const slowest = 5

// Trace is a trace loaded for serving: its analysis and its timeline
// index. It is read-only once Load returns, so handlers share it freely.
type Trace struct {
	Name     string
	Profile  *analysis.Profile
	Findings []diagnose.Finding
	Warning  string // why the trace may be incomplete, if it may
	LoadTime time.Duration

	ix     *index
	names  []string // function names by id; id 0 is unused
	byName map[string]uint32
	files  []string // "file:line" by id
}

// Calls is the number of calls in the timeline index.
func (t *Trace) Calls() int { return t.ix.calls }

// Load reads the trace file name into memory and prepares it: the
// analysis and the timeline index are built at once, from two readers
// of the same bytes, one on each core.
func Load(name string) (*Trace, error) { return load(name, true) }

// LoadBase loads a trace to compare another with: its analysis only, no
// timeline index.
func LoadBase(name string) (*Trace, error) { return load(name, false) }

func load(name string, timeline bool) (*Trace, error) {
	began := time.Now()
	data, err := os.ReadFile(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such trace file", name)
		}
		return nil, err
	}
	ra, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t := &Trace{Name: name, ix: &index{}}
	analyse := func() {
		t.Profile = analysis.Analyze(ra, analysis.Options{Slowest: slowest})
		t.Findings = diagnose.Findings(t.Profile, 5)
	}
	names := ra // a reader that has read the whole trace: it knows every function
	var ixErr error
	if timeline {
		ri, _ := tracefile.NewReader(bytes.NewReader(data)) // the same header read fine above
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			analyse()
		}()
		t.ix, ixErr = buildIndex(ri, int64(len(data)))
		wg.Wait()
		names = ri
	} else {
		analyse()
		if t.Profile.Err != nil {
			ixErr = t.Profile.Err
		}
	}
	switch {
	case ixErr != nil:
		t.Warning = fmt.Sprintf("reading stopped early: %v; showing the calls before that point", ixErr)
	case !t.Profile.Ended:
		t.Warning = "the trace has no end record: the program was killed or is still running"
	}
	n := names.NumFuncs()
	t.names = make([]string, n+1)
	t.files = make([]string, n+1)
	t.byName = make(map[string]uint32, n)
	for id := 1; id <= n; id++ {
		f := names.Func(uint32(id))
		t.names[id] = f.Name
		t.files[id] = fmt.Sprintf("%s:%d", f.File, f.Line)
		// A name can have several ids (the same function listed
		// again): keep one with calls.
		if old, dup := t.byName[f.Name]; !dup || t.Profile.Funcs[old] == nil {
			t.byName[f.Name] = uint32(id)
		}
	}
	// The analysis names functions through its reader, which holds the
	// whole file: name them from the table instead, and let the file go.
	t.Profile.Names = t.name
	t.LoadTime = time.Since(began)
	// Growing the index left garbage as large as the index itself: give
	// it back soon rather than keep twice the memory for the session, but
	// after the page can be served.
	go debug.FreeOSMemory()
	return t, nil
}

// name returns the name of function id, "?" for an id out of range.
func (t *Trace) name(id uint32) string {
	if int(id) < len(t.names) {
		return t.names[id]
	}
	return "?"
}
