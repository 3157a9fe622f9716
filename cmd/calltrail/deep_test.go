//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/calltrail/calltrail/internal/tracetest"
)

// counter counts what is written to it.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// TestDeepEveryVerb takes a trace of a recursion 30,000 calls deep (a
// 300 KB file) through every verb that reads traces: each succeeds within
// 1 GiB of memory, with output of a sensible size, where views quadratic
// in depth wrote gigabytes or ran out of memory. Their time is left to
// go test's limit: a quadratic verb takes minutes.
func TestDeepEveryVerb(t *testing.T) {
	bin := calltrailBinary(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "deep.out")
	if err := os.WriteFile(trace, tracetest.Recursion(30_000), 0o644); err != nil {
		t.Fatal(err)
	}
	out := func(name string) string { return filepath.Join(dir, name) }
	for _, args := range [][]string{
		{"info", trace},
		{"replay", trace},
		{"report", trace},
		{"report", "--json", trace},
		{"chains", "main.rec", trace},
		{"chains", "--json", "main.leaf", trace},
		{"goroutines", trace},
		{"flame", "-o", out("flame.html"), trace},
		{"flame", "--self", "-o", out("self.html"), trace},
		{"flame", "-o", out("flame.svg"), trace},
		{"export", "--format", "pprof", "-o", out("deep.pb.gz"), trace},
		{"export", "--format", "folded", "-o", out("deep.folded"), trace},
		{"export", "--format", "speedscope", "-o", out("deep.speedscope.json"), trace},
		{"export", "--format", "chrome", "-o", out("deep.chrome.json"), trace},
		{"diff", trace, trace},
	} {
		cmd := exec.Command(bin, args...)
		var stdout counter
		var stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("calltrail %s: %v\n%s", strings.Join(args[:len(args)-1], " "), err, stderr.String())
			continue
		}
		size := stdout.n
		for i, a := range args {
			if a == "-o" {
				info, err := os.Stat(args[i+1])
				if err != nil {
					t.Fatal(err)
				}
				size += info.Size()
			}
		}
		rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
		what := strings.ReplaceAll(strings.Join(args[:len(args)-1], " "), dir+"/", "")
		t.Logf("%-40s %8d KB out, %6d MB at most in memory", what, size>>10, rss>>20)
		if rss > 1<<30 && !raceEnabled {
			t.Errorf("calltrail %s: %d MB in memory", what, rss>>20)
		}
		if size > 32<<20 {
			t.Errorf("calltrail %s: %d MB of output", what, size>>20)
		}
	}
}
