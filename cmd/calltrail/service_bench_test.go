//go:build linux

package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/live"
)

// BenchmarkServiceModes runs examples/rpc, a server loaded by clients
// over loopback, untraced and built by calltrail build in each way a
// service runs traced: paused (CALLTRAIL=paused), in flight mode
// (CALLTRAIL_MODE=flight) and recording to a file, reporting requests a
// second. Run the modes interleaved, for benchstat:
//
//	go test -c -o svc.test ./cmd/calltrail && cd cmd/calltrail
//	for i in $(seq 8); do ../../svc.test -test.run '^$' -test.bench ServiceModes -test.benchtime 1x; done
func BenchmarkServiceModes(b *testing.B) {
	untraced, traced := rpcBinaries(b)
	tps := regexp.MustCompile(`throughput \(TPS\) (\d+)`)
	for _, m := range []struct {
		name string
		bin  string
		env  []string
	}{
		{"untraced", untraced, nil},
		{"paused", traced, []string{"CALLTRAIL=paused"}},
		{"flight", traced, []string{"CALLTRAIL_MODE=flight"}},
		{"file", traced, []string{"CALLTRAIL_OUT=" + filepath.Join(b.TempDir(), "rpc.out")}},
	} {
		b.Run(m.name, func(b *testing.B) {
			var sum float64
			for range b.N {
				cmd := exec.Command(m.bin, "-mode", "fixed", "-clients", "2", "-requests", "500000")
				cmd.Env = append(os.Environ(), m.env...)
				out, err := cmd.CombinedOutput()
				if err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				v := tps.FindSubmatch(out)
				if v == nil {
					b.Fatalf("no throughput in %s", out)
				}
				n, _ := strconv.ParseFloat(string(v[1]), 64)
				sum += n
			}
			b.ReportMetric(sum/float64(b.N), "req/s")
		})
	}
}

// BenchmarkSnapshot takes the flight recorder's window from examples/rpc
// under load, through the control endpoint: the time a snapshot takes,
// its size, and the server's memory (VmRSS) at the first and the last.
func BenchmarkSnapshot(b *testing.B) {
	_, traced := rpcBinaries(b)
	cmd := exec.Command(traced, "-mode", "fixed", "-clients", "2", "-requests", "100000000")
	url := "http://" + startService(b, cmd) + live.Prefix + "snapshot"
	time.Sleep(3 * time.Second) // the window fills
	first := rss(b, cmd.Process.Pid)
	var bytes int64
	b.ResetTimer()
	for range b.N {
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		bytes += n
	}
	b.StopTimer()
	b.ReportMetric(float64(bytes)/float64(b.N), "bytes/snapshot")
	b.ReportMetric(float64(first), "rss-first-KB")
	b.ReportMetric(float64(rss(b, cmd.Process.Pid)), "rss-last-KB")
}

// rpcBinaries builds examples/rpc untraced and with calltrail build, once;
// with the control endpoint, which a program that does not import net/http
// gets only when asked.
func rpcBinaries(b *testing.B) (untraced, traced string) {
	b.Helper()
	dir := b.TempDir()
	untraced, traced = filepath.Join(dir, "rpc"), filepath.Join(dir, "rpc-traced")
	if out, err := exec.Command("go", "build", "-o", untraced, "../../examples/rpc").CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	wd, _ := os.Getwd()
	os.Chdir("../..")
	defer os.Chdir(wd)
	if code, _, stderr := runCmd("build", "--live", "-o", traced, "./examples/rpc"); code != 0 {
		b.Fatalf("calltrail build: %s", stderr)
	}
	return untraced, traced
}

// rss returns a process's resident memory in KB.
func rss(b *testing.B, pid int) int {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	return 0
}
