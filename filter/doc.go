// Package filter chooses which calls of a trace a view shows. Every
// calltrail command that reads a trace takes the same filters, and the
// web UI the same as URL parameters of the same names: g GID, F REGEX,
// N REGEX, D DEPTH, t DURATION, window FROM-TO, and, for programs that
// record their OpenTelemetry spans, trace-id ID and span REGEX (Settings).
// Parse reads them, with one set of bounds, from either.
package filter
