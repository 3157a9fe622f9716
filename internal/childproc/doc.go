// Package childproc starts the servers the tests run beside them
// (ClickHouse, the OpenTelemetry Collector) so that they end with the
// test binary: one that go test kills at its timeout, or that panics,
// leaves none running to hold their ports and the machine's cores.
package childproc
