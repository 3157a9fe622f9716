// Package tracetest writes small traces for tests, from a script of
// events or as a deep recursion.
package tracetest
