// Package oteltest starts an OpenTelemetry Collector for calltrail's
// tests, as a user would run one: the Collector built from its released
// modules (scripts/otelcol), receiving OTLP/HTTP on loopback and writing
// what it receives to a file with its file exporter.
package oteltest
