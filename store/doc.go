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
// A selection of the store is a query.Source (Source), as a trace file
// is: Profile adds the selected calls up by chain in ClickHouse, where
// the data is, into the local analysis's model, which the query layer
// asks as it asks a trace's; Chains answers the chains that reached a
// function from the calls themselves, with the counts of recursion and
// the slowest calls a tree of chains cannot hold. For one trace, their
// figures equal the local analysis'.
//
// The schema is in docs/store.md. It keeps to SQL that both Debian's
// ClickHouse 18.16 and current releases accept. With a cluster (the
// URL's cluster parameter), each table is a Distributed table over a
// local table on every shard.
package store
