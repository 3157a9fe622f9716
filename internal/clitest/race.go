//go:build race

package clitest

// Race says the tests run under the race detector, which changes what
// memory measures: sync.Pool drops what it holds at random, so pooled
// buffers are allocated again, and the test process, with its shadow
// memory, passes its size on to the maximum resident size Linux reports
// for every program it starts (they share its memory from the fork to
// their exec). The memory bounds are checked in the run without it.
const Race = true
