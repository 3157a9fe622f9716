// Package spawn finds, for each goroutine a trace records as started by
// another, the call of its parent that started it: every reader that
// ties a goroutine to the chain it came from (the analysis, a push to
// the store, the OTLP export) asks one Linker, so that the rule is
// written once.
//
// The rule: a goroutine was started from its parent's innermost open
// call of the function that holds its go statement (the creator), or,
// if that function is not traced, from the parent's innermost open call,
// when the goroutine began. A goroutine that began after the call of the
// creator ended, with no call of its parent's open, came from the last
// call of the creator before it began.
// The runtime writes a goroutine's record when the goroutine first runs,
// and emits its buffers in turn, so the record can be read before the
// parent's call that started it, or after the parent moved on: a child
// read while its parent has no open call waits for the parent's next
// call of the creator, or, failing that, for the parent's first event
// after the child's record, when the parent's open calls are those that
// were open when the child began.
package spawn
