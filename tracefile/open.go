package tracefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A File is a trace file opened for reading: its Reader, past the
// header, and the file to close.
type File struct {
	*Reader
	f *os.File
}

// Close closes the file, once the reader's goroutine has stopped if it
// reads ahead (Reader.ReadAhead).
func (f *File) Close() error {
	f.StopReadAhead()
	return f.f.Close()
}

// Stat returns the file's FileInfo: its size, to say how much of it has
// been read (see Reader.Offset).
func (f *File) Stat() (fs.FileInfo, error) { return f.f.Stat() }

// Open opens the trace file name and reads its header. Its errors name
// the file and say what is wrong in one line: no such file, or not a
// calltrail trace.
func Open(name string) (*File, error) {
	f, err := open(name)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &File{r, f}, nil
}

// ReadFile reads the whole trace file name into memory, for readers
// that read it more than once, with Open's errors. A file that is not a
// trace is refused from its first bytes, not read to its end first.
func ReadFile(name string) ([]byte, error) {
	f, err := open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
		buf.Grow(int(info.Size()) + bytes.MinRead)
	}
	if _, err := NewReader(io.TeeReader(f, &buf)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// open opens name for Open and ReadFile. A directory is refused at once,
// naming the traces in it: calltrail test -o DIR writes one a test
// binary there, and a directory named like a trace (-o before.trace)
// is then what a user names.
func open(name string) (*os.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, openError(name, err)
	}
	if info, err := f.Stat(); err == nil && info.IsDir() {
		f.Close()
		traces, _ := filepath.Glob(filepath.Join(name, "*.trace"))
		switch {
		case len(traces) == 0:
			return nil, fmt.Errorf("%s is a directory, not a trace file", name)
		case len(traces) > 3:
			traces = append(traces[:3], "...")
		}
		return nil, fmt.Errorf("%s is a directory, not a trace file; the traces in it: %s", name, strings.Join(traces, ", "))
	}
	return f, nil
}

func openError(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: no such trace file (record one with CALLTRAIL_OUT=%s, or name the file)", name, name)
	}
	return err
}
