package calltrail

import (
	"io"
	"sync"
)

// A sink writes the trace file from a goroutine of its own, so that the
// writer, which drains the rings, never waits for the disk: Write copies
// the encoded chunks into one of two buffers and returns, and the file
// goroutine writes them in order. Only when both buffers are still being
// written does Write wait, and the rings then fill: under the fullWait
// policy the program slows down to the disk's speed.
//
// The first write error is kept and everything after it discarded: a
// trace file that cannot be written must not disturb the traced program.
type sink struct {
	w     io.WriteCloser
	full  chan []byte // buffers for the file goroutine to write
	empty chan []byte // buffers it has written, to fill again
	done  chan struct{}

	mu  sync.Mutex
	err error
}

const sinkBuffers = 2

func newSink(w io.WriteCloser) *sink {
	s := &sink{w: w, full: make(chan []byte, sinkBuffers), empty: make(chan []byte, sinkBuffers), done: make(chan struct{})}
	for i := 0; i < sinkBuffers; i++ {
		s.empty <- nil
	}
	go s.run()
	return s
}

func (s *sink) run() {
	defer close(s.done)
	for buf := range s.full {
		if s.Err() == nil {
			if _, err := s.w.Write(buf); err != nil {
				s.mu.Lock()
				s.err = err
				s.mu.Unlock()
			}
		}
		s.empty <- buf
	}
}

// Write hands a copy of p to the file goroutine. It never fails: errors
// are kept for Err, Sync and Close.
func (s *sink) Write(p []byte) (int, error) {
	buf := <-s.empty
	s.full <- append(buf[:0], p...)
	return len(p), nil
}

// Sync waits until everything handed to Write is written, and returns
// the first error.
func (s *sink) Sync() error {
	var bufs [sinkBuffers][]byte
	for i := range bufs {
		bufs[i] = <-s.empty
	}
	for _, b := range bufs {
		s.empty <- b
	}
	return s.Err()
}

// Err returns the first write error.
func (s *sink) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close writes what is left, ends the file goroutine and closes the file.
func (s *sink) Close() error {
	close(s.full)
	<-s.done
	if err := s.w.Close(); err != nil && s.Err() == nil {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
	}
	return s.Err()
}
