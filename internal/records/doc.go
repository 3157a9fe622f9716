// Package records holds the records of a calltrail trace: its functions,
// errors, spans, goroutines and counters, how calls end, the values
// --args records, what the build traced. The runtime, which writes them,
// takes them from here, and package tracefile, which reads them, gives
// them to its users under its own names: so the runtime does not compile
// the trace reader into every traced program, and each record is
// defined once.
package records
