package web

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/tracewrite"
	"github.com/calltrail/calltrail/tracefile"
)

// Function ids of the synthetic trace.
const (
	fnMain = iota + 1
	fnWork
	fnLeaf
	fnWorker
	fnD
)

// writeTrace writes a trace of n calls of main.work, each calling
// main.leaf, in a main.main of goroutine 1 (1µs and 400ns each, one
// after another from 1ms), and goroutine 2, started by main.main at
// main.go:20, whose main.worker calls main.D, which panics. It returns
// the file's path.
func writeTrace(t testing.TB, n int) string {
	t.Helper()
	var buf bytes.Buffer
	e, err := tracewrite.NewEncoder(&buf, map[string]string{"path": "/tmp/synth", "args": "-n", "go": "go1.26.8", "goos": "linux", "goarch": "amd64"})
	if err != nil {
		t.Fatal(err)
	}
	e.Clock(0, 0)
	e.Funcs(1, []tracefile.Func{
		{Name: "main.main", File: "main.go", Line: 10},
		{Name: "main.work", File: "main.go", Line: 30},
		{Name: "main.leaf", File: "main.go", Line: 40},
		{Name: "main.worker", File: "main.go", Line: 50},
		{Name: "main.D", File: "main.go", Line: 60},
	})
	var b tracewrite.Batch
	flush := func() {
		if b.Len() > 10000 {
			e.Events(&b)
		}
	}
	at := int64(time.Millisecond)
	b.Enter(1, fnMain, at)
	for range n {
		b.Enter(1, fnWork, at+100)
		b.Enter(1, fnLeaf, at+300)
		b.Exit(1, tracefile.Return, at+700)
		b.Exit(1, tracefile.Return, at+1000)
		at += 1000
		flush()
	}
	b.Goroutine(tracefile.Goroutine{ID: 2, Parent: 1, CreatorFunc: fnMain, CreatorLine: 20, StartFunc: fnWorker}, at)
	b.Enter(2, fnWorker, at+10)
	b.Enter(2, fnD, at+20)
	b.Exit(2, tracefile.Panic, at+5000)
	b.Exit(2, tracefile.Panic, at+5010)
	b.Exit(1, tracefile.Return, at+10000)
	e.Clock(at+10000, at+10000)
	e.Events(&b)
	e.Stats(tracefile.Stats{Calls: uint64(2*n + 3)})
	e.End("main returned", time.Unix(0, 0))
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trace.out")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func loadTrace(t testing.TB, n int) *Trace {
	t.Helper()
	tr, err := Load(writeTrace(t, n))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
