//go:build unix

package clitest

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes dir for this process, waiting while another holds it,
// and returns what gives it back. A process that dies gives it back.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
