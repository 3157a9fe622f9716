package diagnose

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/internal/words"
)

// Thresholds of the rules about errors.
const (
	// minChainCalls is how many calls a chain needs for its errors, or
	// their absence, to say something.
	minChainCalls = 2
	// hotErrors is how many failed calls make a function's errors a
	// cost worth a line, when its callers carry on.
	hotErrors = 1000
	// growthErrors is how many failed calls the growth rule needs.
	growthErrors = 20
	// errorScore orders the findings about errors that have no time to
	// weigh them: after a function taking a tenth of the time or more.
	errorScore = 0.09
)

// errorFindings applies the rules about errors:
//
//   - chain: a function failing in most of its calls through one chain
//     and never through another;
//   - discarded: a function returning errors in many calls, which its
//     callers drop and carry on, paying for each error built;
//   - growth: a function whose share of failed calls grows over the run.
func errorFindings(p *analysis.Profile, chains func(...*analysis.Node) []string) []Finding {
	byFunc := map[uint32][]*analysis.Node{}
	p.Walk(func(n *analysis.Node) {
		if f := p.Funcs[n.Func]; f != nil && f.Errors > 0 && n.Calls > 0 {
			byFunc[n.Func] = append(byFunc[n.Func], n)
		}
	})
	ids := make([]uint32, 0, len(byFunc))
	for id := range byFunc {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var fs []Finding
	for _, id := range ids {
		f, nodes := p.Funcs[id], byFunc[id]
		fs = append(fs, failingChain(p, f, nodes, chains)...)
		fs = append(fs, discarded(p, f, nodes)...)
		fs = append(fs, growth(p, f)...)
	}
	return fs
}

// failingChain finds the chain through which f fails most, if it fails
// in most of its calls there and never through another chain.
func failingChain(p *analysis.Profile, f *analysis.Func, nodes []*analysis.Node, chains func(...*analysis.Node) []string) []Finding {
	var bad, good *analysis.Node
	for _, n := range nodes {
		if n.Calls < minChainCalls {
			continue
		}
		if 2*n.Errors > n.Calls && (bad == nil || n.Errors > bad.Errors) {
			bad = n
		}
		if n.Errors == 0 && (good == nil || n.Calls > good.Calls) {
			good = n
		}
	}
	if bad == nil || good == nil {
		return nil
	}
	through := chains(bad.Parent, good.Parent)
	msg := fmt.Sprintf("%s failed in %d of its %d calls through %s, and never in %s through %s: %s",
		f.Name, bad.Errors, bad.Calls, through[0], words.Count(good.Calls, "call"), through[1], mostly(p, bad.ErrorIDs))
	return []Finding{{Kind: "errors", Function: f.Name, Message: msg, Score: errorScore}}
}

// discarded finds a function whose errors its callers drop: it fails in
// many calls, and its callers, through which it failed, much less.
func discarded(p *analysis.Profile, f *analysis.Func, nodes []*analysis.Node) []Finding {
	if f.Errors < hotErrors {
		return nil
	}
	var passed, seen uint64 // errors its callers returned in turn, at most; errors with a traced caller
	callers := map[uint32]uint64{}
	for _, n := range nodes {
		if n.Parent != nil && n.Parent.Parent != nil {
			passed += min(n.Parent.Errors, n.Errors)
			seen += n.Errors
			callers[n.Parent.Func] += n.Errors
		}
	}
	if seen < hotErrors || passed*10 > seen {
		return nil // passed on: the error is the program's answer, not a waste
	}
	caller, most, fails := "", uint64(0), false
	for fn, n := range callers {
		name := p.Name(fn)
		if n > most || n == most && name < caller {
			caller, most = name, n
		}
		fails = fails || p.Funcs[fn] != nil && len(p.Funcs[fn].ErrorIDs) > 0
	}
	who := "its caller " + caller
	if len(callers) > 1 {
		who = "its callers, most often " + caller + ","
	}
	failures, overflow := 0, false
	for id := range f.ErrorIDs {
		if p.Failed(id) {
			failures++
			overflow = overflow || p.Error(id).Type == overflowType
		}
	}
	distinct := strconv.Itoa(failures)
	if overflow {
		distinct = "more than " + strconv.Itoa(failures-1)
	}
	msg := fmt.Sprintf("%s returned an error in %d of its %d calls, and %s carried on without it: each error is built (%s distinct, %s) and dropped; "+
		"test for the case without making an error, or return a sentinel error",
		f.Name, f.Errors, f.Calls, who, distinct, mostly(p, f.ErrorIDs))
	if !fails {
		// Callers that never returned an error may have no error to
		// return: a handler answers 404 with it. The trace cannot
		// tell that from an error dropped.
		they := "it drops"
		if len(callers) > 1 {
			they = "they drop"
		}
		msg = fmt.Sprintf("%s returned an error in %d of its %d calls, and %s returned none in turn: if %s them, each error is built (%s distinct, %s) for nothing; "+
			"test for the case without making an error, or return a sentinel error",
			f.Name, f.Errors, f.Calls, who, they, distinct, mostly(p, f.ErrorIDs))
	}
	// After the findings about time: where the errors cost CPU, the
	// callee rule says how much.
	return []Finding{{Kind: "errors", Function: f.Name, Message: msg, Score: errorScore}}
}

// growth finds a function whose share of failed calls in the second half
// of the run is at least twice that of the first, and a tenth or more.
func growth(p *analysis.Profile, f *analysis.Func) []Finding {
	if f.Errors < growthErrors {
		return nil
	}
	calls, errs := f.Growth.Halves(int64(p.Duration))
	if calls[0] == 0 || calls[1] == 0 {
		return nil
	}
	early, late := float64(errs[0])/float64(calls[0]), float64(errs[1])/float64(calls[1])
	if late < 0.1 || late < 2*early {
		return nil
	}
	msg := fmt.Sprintf("%s failed in %.0f%% of its calls in the first half of the run and %.0f%% in the second (%d and %d calls): errors grow with the run; %s",
		f.Name, 100*early, 100*late, calls[0], calls[1], mostly(p, f.ErrorIDs))
	return []Finding{{Kind: "errors", Function: f.Name, Message: msg, Score: errorScore}}
}

// overflowType is the type of the error table's last entry when the
// program returned more distinct errors than the runtime keeps.
const overflowType = "(calltrail)"

// mostly names the failure returned most among ids, which count errors:
// ends (see analysis.Profile.Failed) are not failures.
func mostly(p *analysis.Profile, all map[uint32]uint64) string {
	ids := map[uint32]uint64{}
	for id, n := range all {
		if p.Failed(id) {
			ids[id] = n
		}
	}
	var best uint32
	for id, n := range ids {
		if p.Error(id).Type == overflowType {
			continue
		}
		if best == 0 || n > ids[best] || n == ids[best] && id < best {
			best = id
		}
	}
	e := p.Error(best)
	text := e.String()
	var sum uint64
	for _, n := range ids {
		sum += n
	}
	switch {
	case len(ids) == 1:
		return "always " + text
	case ids[best]*2 <= sum:
		return "for example " + text
	}
	return fmt.Sprintf("most often %s (%d of %d)", text, ids[best], sum)
}
