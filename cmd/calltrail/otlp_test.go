//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/oteltest"
	"github.com/calltrail/calltrail/query"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// startCollector starts an OpenTelemetry Collector for the test.
func startCollector(t *testing.T) *oteltest.Collector {
	t.Helper()
	bin, err := oteltest.Binary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := oteltest.Start(bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// spanMap indexes the spans of td by span id, each as its OTLP JSON with
// its resource's attributes.
func spanMap(t *testing.T, td ptrace.Traces) map[string]string {
	t.Helper()
	m := map[string]string{}
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		res, _ := json.Marshal(rs.Resource().Attributes().AsRaw())
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			for k := 0; k < ss.Spans().Len(); k++ {
				sp := ss.Spans().At(k)
				one := ptrace.NewTraces()
				sp.CopyTo(one.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty())
				js, err := (&ptrace.JSONMarshaler{}).MarshalTraces(one)
				if err != nil {
					t.Fatal(err)
				}
				id := sp.SpanID().String()
				if _, dup := m[id]; dup {
					t.Errorf("span id %s twice", id)
				}
				m[id] = ss.Scope().Name() + " " + string(res) + " " + string(js)
			}
		}
	}
	return m
}

// TestOTLPCollector traces two processes, sends the spans of their
// failed calls and of the calls of serve and handle to a real
// OpenTelemetry Collector with push --to otlp://, and checks that the
// Collector received exactly the spans export --format otlp writes, and
// that they nest as the calls do: a handle span in each request's
// goroutine, linked to the serve span that started it and in its trace,
// with each failed D inside it.
func TestOTLPCollector(t *testing.T) {
	col := startCollector(t)
	traces := traceFailing(t, 2)
	dir := t.TempDir()
	choose := []string{"--spans", `^main\.(serve|handle)$`, "--failed"}
	if code, _, stderr := runCmd(append(append([]string{"push", "--to", col.URL, "--service", "failing", "--label", "version=1"}, choose...), traces...)...); code != 0 {
		t.Fatalf("push --to %s: exit %d: %s", col.URL, code, stderr)
	}

	want := map[string]string{}
	for _, trace := range traces {
		out := filepath.Join(dir, filepath.Base(trace)+".json")
		if code, _, stderr := runCmd(append(append([]string{"export", "--format", "otlp", "-o", out}, choose...), trace)...); code != 0 {
			t.Fatalf("export --format otlp: exit %d: %s", code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(data)
		if err != nil {
			t.Fatalf("%s: not OTLP JSON: %v", out, err)
		}
		// What push adds to the resource, export leaves to the defaults.
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			td.ResourceSpans().At(i).Resource().Attributes().PutStr("version", "1")
		}
		m := spanMap(t, td)
		checkNesting(t, trace, td)
		for id, s := range m {
			want[id] = s
		}
	}
	got, err := col.Spans(len(want), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	gotMap := spanMap(t, got)
	if len(gotMap) != len(want) {
		t.Errorf("the Collector received %d spans, export wrote %d", len(gotMap), len(want))
	}
	for id, w := range want {
		if g, ok := gotMap[id]; !ok {
			t.Errorf("span %s not received", id)
		} else if g != w {
			t.Errorf("span %s received as\n%s\nexported as\n%s", id, g, w)
		}
	}

	// Bad receivers get a one-line error.
	for _, to := range []string{"otlp://127.0.0.1:1", strings.TrimSuffix(col.URL, "/") + "/nowhere"} {
		code, _, stderr := runCmd("push", "--to", to, traces[0])
		if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("push --to %s: exit %d, %q; want exit 1 and one line", to, code, stderr)
		}
	}
}

// checkNesting checks the spans of one trace of examples/failing against
// its chains: a span for every call of serve and handle and every failed
// call of D, nested and linked as the calls and their goroutines are.
func checkNesting(t *testing.T, trace string, td ptrace.Traces) {
	t.Helper()
	code, stdout, stderr := runCmd("chains", "--json", "--errors", "--slowest", "0", "main.D", trace)
	if code != 0 {
		t.Fatalf("chains: exit %d: %s", code, stderr)
	}
	var res struct{ Chains []query.Chain }
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	failedD := map[string]uint64{} // by the chain's caller of D
	for _, c := range res.Chains {
		failedD[c.Path[len(c.Path)-2].Name] += c.Errors
	}
	byID := map[pcommon.SpanID]ptrace.Span{}
	var all []ptrace.Span
	ss := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < ss.Len(); i++ {
		byID[(ss.At(i).SpanID())] = ss.At(i)
		all = append(all, ss.At(i))
	}
	count := map[string]int{}
	var serve ptrace.Span
	for _, s := range all {
		count[s.Name()]++
		if s.Name() == "main.serve" {
			serve = s
		}
	}
	if count["main.serve"] != 1 || count["main.handle"] != 100 {
		t.Fatalf("%s: %d serve and %d handle spans, want 1 and 100", trace, count["main.serve"], count["main.handle"])
	}
	gotD := map[string]uint64{}
	for _, s := range all {
		parent, hasParent := byID[(s.ParentSpanID())]
		switch s.Name() {
		case "main.handle":
			if hasParent || s.Links().Len() != 1 || s.Links().At(0).SpanID() != serve.SpanID() || s.TraceID() != serve.TraceID() {
				t.Errorf("%s: a handle span is not linked to serve, in its trace", trace)
			}
			if s.StartTimestamp() < serve.StartTimestamp() || s.EndTimestamp() > serve.EndTimestamp() {
				t.Errorf("%s: a handle span is outside serve's", trace)
			}
		case "main.D":
			if s.Status().Code() != ptrace.StatusCodeError || s.Status().Message() == "" {
				t.Errorf("%s: a D span without its error", trace)
			}
			caller := "main.loadOverrides" // not a span: its D spans are roots
			if hasParent {
				caller = parent.Name()
				if parent.TraceID() != s.TraceID() || s.StartTimestamp() < parent.StartTimestamp() || s.EndTimestamp() > parent.EndTimestamp() {
					t.Errorf("%s: a D span is outside its parent %s", trace, parent.Name())
				}
			}
			gotD[caller]++
		}
	}
	if !reflect.DeepEqual(gotD, failedD) {
		t.Errorf("%s: failed D spans by caller %v, chains --errors says %v", trace, gotD, failedD)
	}
}
