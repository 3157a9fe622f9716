package web

import (
	"bytes"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/tracefile"
)

// slowest is how many of the slowest calls each chain keeps for the
// function view.
const slowest = 5

// Trace is a trace loaded for serving: its analysis, which answers the
// queries the command line answers too, and its timeline index. It is
// read-only once Load returns, so handlers share it freely.
type Trace struct {
	*query.Trace
	Warning  string // why the trace may be incomplete, if it may
	LoadTime time.Duration

	ix  *index
	req *requests // nil for a trace without OpenTelemetry spans
}

// Calls is the number of calls in the timeline index.
func (t *Trace) Calls() int { return t.ix.calls }

// FromQuery serves t, made from elsewhere than a trace file (a store's
// aggregates): every view but the timeline and the call tree, which need
// the calls themselves, and which it shows empty.
func FromQuery(t *query.Trace, warning string) *Trace {
	return &Trace{Trace: t, Warning: warning, ix: &index{}}
}

// Load reads the trace file name into memory and prepares it: the
// analysis and the timeline index are built at once, from two readers
// of the same bytes, one on each core. A trace with OpenTelemetry spans,
// as the index finds, is read twice more for them (see package spans),
// and its bytes are kept to analyse the calls of the requests a view
// selects.
func Load(name string) (*Trace, error) { return load(name, true) }

// LoadBase loads a trace to compare another with: its analysis only, no
// timeline index.
func LoadBase(name string) (*Trace, error) { return load(name, false) }

func load(name string, timeline bool) (*Trace, error) {
	began := time.Now()
	data, err := tracefile.ReadFile(name)
	if err != nil {
		return nil, err
	}
	ra, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t := &Trace{ix: &index{}}
	var p *analysis.Profile
	analyse := func() { p = analysis.Analyze(ra, analysis.Options{Slowest: slowest}) }
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
	} else {
		analyse()
		ixErr = p.Err
	}
	h := p.Health()
	h.Damage = ixErr // the index reads the whole file
	said := h.Warnings()
	if h.Damage != nil { // which says it all: a cut trace has no end either
		said = []string{fmt.Sprintf("reading stopped early: %v; showing the calls before that point", h.Damage)}
	}
	t.Warning = strings.Join(said, "; ")
	if t.ix.hasSpans {
		t.req = loadRequests(name, data, t.ix, p.Name)
	}
	// The profile holds the trace's tables, so the readers, which hold
	// the whole file, can go; the bytes stay for the requests, if any.
	t.Trace = query.New(name, p)
	t.LoadTime = time.Since(began)
	// Growing the index left garbage as large as the index itself: give
	// it back soon rather than keep twice the memory for the session, but
	// after the page can be served.
	go debug.FreeOSMemory()
	return t, nil
}
