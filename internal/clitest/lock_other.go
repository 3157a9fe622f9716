//go:build !unix

package clitest

import "errors"

// lockDir is lock_unix.go's; here it is unsupported, and Fetch copies
// into a directory of the test's own.
func lockDir(dir string) (unlock func(), err error) {
	return nil, errors.ErrUnsupported
}
