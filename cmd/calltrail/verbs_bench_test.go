package main

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/tracefile"
)

// BenchmarkVerbs runs each verb that reads a trace over a generated one of
// ten million calls (tracetest.WriteSynthetic: 64 goroutines, 1,000
// functions), and reports calls/s and its time as a multiple of a bare
// uvarint scan of the same file (x-scan), the floor of any reader, timed
// before each run of the verb: both of the fastest run (ns/op is the
// mean). CALLTRAIL_BENCH_CALLS sets another number of calls;
// CALLTRAIL_BENCH_TRACE names a trace to read instead, and
// CALLTRAIL_BENCH_FUNC a function of it for chains.
//
//	go test -run '^$' -bench Verbs -benchtime 1x ./cmd/calltrail
func BenchmarkVerbs(b *testing.B) {
	calls := 10_000_000
	if s := os.Getenv("CALLTRAIL_BENCH_CALLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		calls = n
	}
	dir := b.TempDir()
	path, fn := os.Getenv("CALLTRAIL_BENCH_TRACE"), os.Getenv("CALLTRAIL_BENCH_FUNC")
	if path == "" {
		path, fn = filepath.Join(dir, "synthetic.trace"), "pkg.F3"
		if err := tracetest.WriteSynthetic(path, calls); err != nil {
			b.Fatal(err)
		}
	} else {
		if fn == "" {
			b.Fatal("CALLTRAIL_BENCH_FUNC names no function of the trace for chains")
		}
		f, err := tracefile.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		sum, ok := f.Summary()
		f.Close()
		if !ok {
			b.Fatalf("%s: the trace ends with no summary", path)
		}
		calls = int(sum.Calls)
	}
	// info reads the summary the trace ends with; --scan every event:
	// both say the same.
	_, quick, _ := runCmd("info", path)
	_, full, _ := runCmd("info", "--scan", path)
	if cut := func(s string) string { return s[:strings.LastIndex(s, "read ")] }; cut(quick) != cut(full) {
		b.Fatalf("info and info --scan differ:\n%s\n%s", quick, full)
	}
	for _, v := range []struct {
		name string
		args []string
	}{
		{"info", []string{"info"}},
		{"info-scan", []string{"info", "--scan"}},
		{"report", []string{"report"}},
		{"chains", []string{"chains", fn}},
		{"goroutines", []string{"goroutines"}},
		{"flame", []string{"flame", "-o", filepath.Join(dir, "flame.svg")}},
		{"export-folded", []string{"export", "--format", "folded", "-o", filepath.Join(dir, "folded.txt")}},
		{"export-pprof", []string{"export", "--format", "pprof", "-o", filepath.Join(dir, "profile.pb.gz")}},
		{"replay", []string{"replay", "-D", "1"}},
	} {
		args := v.args
		b.Run(v.name, func(b *testing.B) {
			// The scan runs before each run of the verb, and the ratio
			// is of the fastest of each: on a machine whose neighbours
			// come and go, the scan took from 140 to 250 ms within a
			// minute, and the fastest runs are those they touched least.
			scan, per := time.Duration(1<<62), time.Duration(1<<62)
			for range b.N {
				b.StopTimer()
				scan = min(scan, uvarintScan(b, path))
				b.StartTimer()
				start := time.Now()
				// Output discarded, as to /dev/null: the verb's work,
				// not a buffer of replay's 300 MB growing.
				var stderr strings.Builder
				if code := run(append(args, path), io.Discard, &stderr); code != 0 {
					b.Fatalf("calltrail %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
				}
				per = min(per, time.Since(start))
			}
			b.ReportMetric(float64(calls)/per.Seconds(), "calls/s")
			b.ReportMetric(float64(per)/float64(scan), "x-scan")
			b.ReportMetric(float64(scan.Microseconds())/1e3, "scan-ms")
		})
	}
}

// uvarintScan times decoding every byte of the file at path as uvarints.
func uvarintScan(tb testing.TB, path string) time.Duration {
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	start := time.Now()
	buf := make([]byte, 4<<20)
	var sum uint64
	carry := 0
	for {
		n, err := io.ReadFull(f, buf[carry:])
		p := buf[:carry+n]
		for len(p) >= binary.MaxVarintLen64 || err != nil && len(p) > 0 {
			v, k := binary.Uvarint(p)
			sum += v
			p = p[max(k, 1):]
		}
		carry = copy(buf, p)
		if err != nil {
			break
		}
	}
	d := time.Since(start)
	if sum == 0 {
		tb.Fatal("nothing scanned")
	}
	return d
}
