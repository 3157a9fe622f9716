// Package flame draws flame graphs of exact call durations, not samples,
// as static SVG, in the colours of the web UI's flame graph (package web
// draws the interactive page, calltrail flame's HTML output included). The
// graphs come from package query: by total time, by self time inverted,
// on or off CPU, and against a base trace.
package flame
