// Package chtest starts ClickHouse servers for calltrail's tests, as a
// user would run them: Debian's clickhouse-server, with a configuration
// of its own under a temporary directory, listening on loopback only.
package chtest
