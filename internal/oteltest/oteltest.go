package oteltest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/calltrail/calltrail/internal/childproc"
)

// Collector is a running Collector.
type Collector struct {
	URL  string // where it receives spans: otlp://127.0.0.1:PORT
	File string // where it writes them, a line of OTLP JSON a request
	cmd  *exec.Cmd
	log  bytes.Buffer
}

// Binary returns the Collector to run: $CALLTRAIL_OTELCOL, which
// scripts/test.sh builds once, or else one built now into dir from
// scripts/otelcol (which takes a minute the first time).
func Binary(dir string) (string, error) {
	if p := os.Getenv("CALLTRAIL_OTELCOL"); p != "" {
		return p, nil
	}
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "otelcol")
	bin := filepath.Join(dir, "otelcol")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the Collector in %s: %v\n%s", src, err, out)
	}
	return bin, nil
}

// Start runs the Collector bin with a configuration of its own under dir.
func Start(bin, dir string) (*Collector, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	c := &Collector{URL: fmt.Sprintf("otlp://127.0.0.1:%d", port), File: filepath.Join(dir, "spans.json")}
	config := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
exporters:
  file:
    path: %s
    flush_interval: 50ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
`, port, c.File)
	cfg := filepath.Join(dir, "otelcol.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		return nil, err
	}
	c.cmd = exec.Command(bin, "--config", cfg)
	childproc.DieWithParent(c.cmd)
	c.cmd.Stdout, c.cmd.Stderr = &c.log, &c.log
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { c.cmd.Wait(); close(exited) }()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			conn.Close()
			return c, nil
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("the Collector exited: %s", c.log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.Stop()
			<-exited
			return nil, fmt.Errorf("the Collector did not listen within 30s: %s", c.log.String())
		}
	}
}

// Stop stops the Collector.
func (c *Collector) Stop() {
	c.cmd.Process.Kill()
}

// Spans waits until the Collector has written at least n spans, for at
// most timeout, and returns all it has written.
func (c *Collector) Spans(n int, timeout time.Duration) (ptrace.Traces, error) {
	deadline := time.Now().Add(timeout)
	for {
		td, err := c.read()
		if err == nil && td.SpanCount() >= n {
			return td, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("the Collector wrote %d spans in %s, want %d", td.SpanCount(), timeout, n)
			}
			return td, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Collector) read() (ptrace.Traces, error) {
	all := ptrace.NewTraces()
	f, err := os.Open(c.File)
	if os.IsNotExist(err) {
		return all, nil
	}
	if err != nil {
		return all, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(sc.Bytes())
		if err != nil {
			return all, nil // a line being written: read again later
		}
		td.ResourceSpans().MoveAndAppendTo(all.ResourceSpans())
	}
	return all, sc.Err()
}
