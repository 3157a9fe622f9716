package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/calltrail/calltrail/internal/originals"
	"github.com/calltrail/calltrail/tracefile"
)

// writeFile writes an output file, data, to path, as createFile does.
func writeFile(path string, data []byte) error {
	f, err := createFile(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.abandon()
		return err
	}
	return f.commit()
}

// outputFile is an output being written to a path.
type outputFile struct {
	*os.File
	path string // where commit renames the file to; empty to write in place
	perm os.FileMode
}

// createFile starts an output file at path, written to a temporary
// file beside it that commit renames into place, so that a failure never
// leaves it half written and its size costs no memory. A link is
// followed, and an existing file keeps its mode. What is not a regular
// file (a device such as /dev/null, a pipe, a terminal, /dev/stdout) is
// written in place: calltrail renames over nothing but a regular file.
func createFile(path string) (*outputFile, error) {
	if info, err := os.Stat(path); err == nil && !info.Mode().IsRegular() {
		if info.IsDir() {
			return nil, fmt.Errorf("%s is a directory", path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &outputFile{File: f}, nil
	}
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	perm := os.FileMode(0o644)
	if info, err := os.Stat(path); err == nil {
		perm = info.Mode().Perm()
	}
	// The signals are watched before the file is there: one that came
	// between the two would leave it behind.
	unfinished.Lock()
	defer unfinished.Unlock()
	unfinished.watch()
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		unfinished.idle()
		return nil, err
	}
	unfinished.names[tmp.Name()] = true
	return &outputFile{File: tmp, path: path, perm: perm}, nil
}

// unfinished are the temporary files of the outputs being written. A
// signal that ends calltrail (SIGINT, SIGTERM, SIGHUP) while there are
// some removes them before calltrail dies of it, so that an interrupted
// export leaves no file behind, as a failed one does not.
var unfinished files

type files struct {
	sync.Mutex
	names map[string]bool
	sigs  chan os.Signal
	// watched are the end signals calltrail did not start ignoring:
	// under nohup, or in the background of a shell without job
	// control, it goes on ignoring them.
	watched []os.Signal
}

// watch watches for the signals, for a file about to be made. The lock
// is held.
func (u *files) watch() {
	if u.sigs == nil {
		u.sigs = make(chan os.Signal, 1)
		for _, sig := range endSignals {
			if !signal.Ignored(sig) {
				u.watched = append(u.watched, sig)
			}
		}
		go u.removeOnSignal()
	}
	if len(u.names) == 0 {
		u.names = map[string]bool{}
		if len(u.watched) > 0 {
			signal.Notify(u.sigs, u.watched...)
		}
	}
}

// idle stops watching for the signals when no file is left. The lock
// is held.
func (u *files) idle() {
	if len(u.names) == 0 {
		signal.Stop(u.sigs)
	}
}

// done ends the watch of a file, and of the signals with the last.
func (u *files) done(name string) {
	u.Lock()
	defer u.Unlock()
	delete(u.names, name)
	u.idle()
}

func (u *files) removeOnSignal() {
	sig := <-u.sigs
	u.Lock() // for good: no file is added after
	for name := range u.names {
		os.Remove(name)
	}
	signal.Reset(u.watched...)
	if s, ok := sig.(syscall.Signal); ok {
		reraise(s)
		os.Exit(128 + int(s))
	}
	os.Exit(1)
}

// commit ends the output: the file takes its place.
func (f *outputFile) commit() error {
	err := f.Close()
	if f.path == "" {
		return err
	}
	if err == nil {
		err = os.Chmod(f.Name(), f.perm)
	}
	if err == nil {
		err = os.Rename(f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	unfinished.done(f.Name())
	return err
}

// abandon ends a failed output: nothing takes the place of the file,
// which a device or pipe written in place keeps what it was sent.
func (f *outputFile) abandon() {
	f.Close()
	if f.path != "" {
		os.Remove(f.Name())
		unfinished.done(f.Name())
	}
}

// rewrite replaces the contents of the user's file path with data, as
// gofmt -w does: in place, so that the file keeps its links, mode and
// owner, after a copy of the original is made beside it to restore if
// the write fails. A link is written through. A file without write
// permission is refused, even where the file system would allow it.
func rewrite(path string, data []byte) error {
	info, err := rewritable(path)
	if err != nil {
		return err
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if target, err := filepath.EvalSymlinks(path); err == nil {
		dir = filepath.Dir(target)
	}
	backup, err := os.CreateTemp(dir, "."+filepath.Base(path)+".orig-*")
	if err != nil {
		return err
	}
	_, err = backup.Write(orig)
	if cerr := backup.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(backup.Name())
		return err
	}
	if err := os.WriteFile(path, data, info.Mode().Perm()); err != nil {
		if rerr := os.WriteFile(path, orig, info.Mode().Perm()); rerr != nil {
			return fmt.Errorf("%v; the original is in %s", err, backup.Name())
		}
		os.Remove(backup.Name())
		return err
	}
	return os.Remove(backup.Name())
}

// rewritable says whether rewrite may write the user's file path: a
// regular file with write permission, in a directory where the copy of
// its original can be made.
func rewritable(path string) (os.FileInfo, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if info.Mode().Perm()&0o222 == 0 {
		return nil, fmt.Errorf("%s: read-only", path)
	}
	return info, nil
}

// notInput refuses an output path that names one of the inputs: writing
// there would destroy what is being read.
func notInput(output string, inputs ...string) error {
	if output == "" {
		return nil
	}
	out, err := os.Stat(output)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	for _, in := range inputs {
		if info, err := os.Stat(in); err == nil && os.SameFile(out, info) {
			return usageError{fmt.Sprintf("-o %s: that is the trace being read; name another file", output)}
		}
	}
	return nil
}

// replaceable refuses a trace output path that names a file other than a
// trace: calltrail run -o main.go would otherwise replace the program's
// source with its trace. A new path, an empty file, a trace, and what is
// not a regular file (/dev/null) may be written, but for a name of Go
// source (see goSource).
//
// named is how the user named the path, for the error: "-o x.out".
func replaceable(path, named string) error {
	if err := goSource(path, named); err != nil {
		return err
	}
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() || info.Size() == 0 {
		return nil
	}
	if trace, err := traceHead(path); err != nil || trace {
		return nil // writing will say why it cannot
	}
	return usageError{fmt.Sprintf("%s: the file is there and is not a calltrail trace; name a new file", named)}
}

// isTrace reports whether path is a file that starts as a calltrail
// trace does.
func isTrace(path string) bool {
	trace, err := traceHead(path)
	return err == nil && trace
}

// traceHead reports whether the file at path starts as a calltrail trace
// does, or why it cannot be opened.
func traceHead(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, len(tracefile.Magic))
	_, err = io.ReadFull(f, head)
	return err == nil && string(head) == tracefile.Magic, nil
}

// goSource refuses an output path named as Go source is (x.go, go.mod,
// go.sum, go.work), whether the file is there or not, empty or not: no
// output of calltrail is Go source, and one written there breaks the
// build of the package or module it lands in.
func goSource(path, named string) error {
	switch base := filepath.Base(path); {
	case strings.HasSuffix(base, ".go") || base == "go.mod" || base == "go.sum" || base == "go.work":
		return usageError{fmt.Sprintf("%s: that is the name of Go source; name another file", named)}
	}
	return nil
}

// notKept refuses an output path, for a graph or an export, that names
// a trace or Go source: flame -o with its arguments in the wrong order
// would replace a trace with a graph, export -o main.go the program's
// source. Any other file is replaced, the previous graph or profile of
// the same name first of all.
func notKept(path string) error {
	if err := goSource(path, "-o "+path); err != nil {
		return err
	}
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() || info.Size() == 0 {
		return nil
	}
	if isTrace(path) {
		return usageError{fmt.Sprintf("-o %s: that is a calltrail trace; name another file", path)}
	}
	return nil
}

// writable checks, before any work, that an output file can be created
// at path: its directory exists and takes new files. named is as for
// replaceable.
func writable(path, named string) error {
	dir := filepath.Dir(path)
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", named, err)
	}
	if !info.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", named, dir)
	}
	f, err := os.CreateTemp(dir, ".calltrail-probe-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write in %s: %w", named, dir, errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// originals keeps the originals of the files instrument -w changes.
var originalFiles originals.Store
