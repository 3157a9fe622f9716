// This file lets the package declare functions without a body, which the
// go:linkname declarations in exithook_new.go and exithook_old.go need.
