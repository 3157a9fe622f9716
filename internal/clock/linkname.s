// This file lets the package declare functions without a body, which the
// go:linkname declarations in nanotime.go need on every architecture.
