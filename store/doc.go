// Package store keeps calltrail's traces in ClickHouse, for questions
// across many processes and runs: which chains reached a function in any
// replica of a service, where the time went in every CI run of a week,
// what changed between two versions.
//
// Push streams a trace into the store: a row per call, with the chain
// that reached it, in batches, with memory independent of the trace's
// size. Pushing the same trace twice stores it once: a trace is known by
// the SHA-256 of its bytes, and its rows count only once the push that
// wrote them has committed (a row in the pushes table), so an interrupted
// push leaves nothing a query sees and can simply be run again.
//
// The queries (Functions, Chains, Compare, Folded) run as SQL in
// ClickHouse, aggregating where the data is, and return the query
// package's types, so that the command line prints them as it prints a
// local trace's. For one trace, their figures equal the local analysis'.
//
// The schema is in docs/store.md. It keeps to SQL that both Debian's
// ClickHouse 18.16 and current releases accept. With a cluster (the
// URL's cluster parameter), each table is a Distributed table over a
// local table on every shard.
package store
