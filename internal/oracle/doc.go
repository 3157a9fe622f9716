// Package oracle checks that calltrail's views of one trace agree: the
// calls as replay prints them, the events as the reader gives them, and
// report, chains, the function page, the flame graph, goroutines and the
// folded and pprof exports. Tests run it over generated traces and over
// the traces of real programs; each disagreement names the two views.
package oracle
