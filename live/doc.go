// Package live serves a traced program's calls over HTTP while it runs,
// as net/http/pprof serves its profiles. Register its handlers on the
// program's own mux:
//
//	live.Register(mux) // under /debug/calltrail/
//
// or, in a program built by calltrail build, which imports this package
// for it, set CALLTRAIL_HTTP=ADDR in its environment. Either way,
// calltrail record, top and collect are its clients, through Client:
//
//	GET  /debug/calltrail/snapshot           the flight recorder's window, as a trace file
//	GET  /debug/calltrail/snapshot?last=5s   the last five seconds of it
//	POST /debug/calltrail/capture?seconds=N  the calls of the next N seconds (a paused program is switched on for them)
//	POST /debug/calltrail/capture?seconds=N&profiles=cpu  and the Go runtime's CPU profile of that time
//	GET  /debug/calltrail/counters           running totals, as JSON
//	POST /debug/calltrail/on, .../off        switch recording on or off
//
// Snapshots and captures need the flight recorder (CALLTRAIL_MODE=flight,
// the default with CALLTRAIL_HTTP). A capture whose client goes away ends
// then, and a paused program is paused again at once.
//
// Security (see Handler): the listener CALLTRAIL_HTTP starts binds to
// loopback unless the address names another host, and then only with a
// token. With CALLTRAIL_HTTP_TOKEN set, every request must carry the
// header "Authorization: Bearer TOKEN" (calltrail record and top send it
// from the same variable); without it, only requests whose Host header
// names loopback are answered, so that a web page cannot reach the
// handlers through a name it controls. Requests a browser sends for a
// page of another origin are refused, and what changes the program's
// state takes POST. The same holds on a listener of its own and on the
// program's mux.
package live
