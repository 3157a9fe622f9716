//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPanickingTest: a test that panics kills its test binary, as under
// go test, and the binary's trace still ends complete, saying so, with
// the calls of the test that ran before it.
func TestPanickingTest(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod": "module example.com/ptest\n\ngo 1.22\n",
		"p.go": `package ptest

func Work(n int) int {
	s := 0
	for i := range n {
		s += step(i)
	}
	return s
}

func step(i int) int { return i % 7 }

func Boom() { panic("boom") }
`,
		"p_test.go": `package ptest

import "testing"

func TestWork(t *testing.T) {
	if Work(1000) == 0 {
		t.Fatal("no work")
	}
}

func TestBoom(t *testing.T) { Boom() }
`,
	})
	chdir(t, dir)
	code, stdout, stderr := runCmd("test", "-o", "traces", ".")
	if code != 1 || !strings.Contains(stdout+stderr, "panic: boom") {
		t.Fatalf("calltrail test: exit %d, want 1 with the panic\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, filepath.Join("traces", "ptest.test.trace"))
	// TestWork, Work, 1000 calls of step, TestBoom and Boom.
	if s.End != "panic" || s.Calls != 1004 || s.Panics != 2 {
		t.Errorf("trace ended %q with %d calls, %d left by panic; want panic, 1004, 2", s.End, s.Calls, s.Panics)
	}
}
