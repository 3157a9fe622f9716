//go:build !race

package clitest

// Race says the tests run under the race detector.
const Race = false
