package calltrail

import (
	"syscall"
	"unsafe"
)

// canSeeBrokenPipes says brokenPipe can tell a pipe that no one reads.
const canSeeBrokenPipes = true

// brokenPipe says whether writing to fd fails for want of a reader: poll
// reports an error (a pipe without a reader) or a hang-up (a socket
// closed) on it.
func brokenPipe(fd int) bool {
	const pollOut, pollErr, pollHup = 0x4, 0x8, 0x10
	pfd := struct {
		fd              int32
		events, revents int16
	}{fd: int32(fd), events: pollOut}
	var zero syscall.Timespec
	n, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
	return errno == 0 && n == 1 && pfd.revents&(pollErr|pollHup) != 0
}
