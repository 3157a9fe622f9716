package otlp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/tracefile"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// script is a trace of three goroutines. Goroutine 1 runs main, which
// calls a, which calls b, which calls c, which returns an error.
// Goroutine 2, started in b, runs w, which calls c again, slowly, and
// panics. Goroutine 3 starts after main has returned.
const script = `
1 +main.main 0
1 +main.a 10
1 +main.b 20
1 +main.c 30
1 -boom 40
2 go 1 main.b 45
2 +main.w 45
2 +main.c 50
2 - 5000
2 ! 5010
1 - 60
1 - 6000
1 - 6010
3 go 1 main.main 7000
3 +main.w 7000
3 - 7010
`

func spansOf(t *testing.T, script string, o Options) map[string][]ptrace.Span {
	t.Helper()
	data, err := tracetest.Build(script)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	td, err := Spans(r, o)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]ptrace.Span{}
	ss := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < ss.Len(); i++ {
		byName[ss.At(i).Name()] = append(byName[ss.At(i).Name()], ss.At(i))
	}
	return byName
}

func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want map[string]int
	}{
		{"failed", Options{Failed: true}, map[string]int{"main.c": 1, "main.w": 1}},
		{"slower", Options{Slower: 4 * time.Microsecond}, map[string]int{"main.main": 1, "main.a": 1, "main.w": 1, "main.c": 1}},
		{"funcs", Options{Funcs: regexp.MustCompile(`^main\.(a|c)$`)}, map[string]int{"main.a": 1, "main.c": 2}},
		{"any of them", Options{Funcs: regexp.MustCompile(`^main\.b$`), Failed: true}, map[string]int{"main.b": 1, "main.c": 1, "main.w": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]int{}
			for name, spans := range spansOf(t, script, tc.o) {
				got[name] = len(spans)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("spans %v, want %v", got, tc.want)
			}
			for name, n := range tc.want {
				if got[name] != n {
					t.Fatalf("spans %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestNesting(t *testing.T) {
	s := spansOf(t, script, Options{Funcs: regexp.MustCompile(`^main\.(main|a|c|w)$`)})
	main, a, w := s["main.main"][0], s["main.a"][0], s["main.w"]
	var c1, c2 ptrace.Span
	for _, c := range s["main.c"] {
		if v, _ := c.Attributes().Get("calltrail.goroutine"); v.Int() == 1 {
			c1 = c
		} else {
			c2 = c
		}
	}
	// b is not a span: c's parent is a.
	if c1.ParentSpanID() != a.SpanID() || a.ParentSpanID() != main.SpanID() || !main.ParentSpanID().IsEmpty() {
		t.Errorf("goroutine 1's spans do not nest main > a > c")
	}
	if c1.Status().Code() != ptrace.StatusCodeError || c1.Status().Message() != "boom" {
		t.Errorf("c's status %v %q, want its error", c1.Status().Code(), c1.Status().Message())
	}
	if c1.EndTimestamp()-c1.StartTimestamp() != 10 || a.EndTimestamp()-a.StartTimestamp() != 5990 {
		t.Errorf("durations %d, %d; want 10, 5990", c1.EndTimestamp()-c1.StartTimestamp(), a.EndTimestamp()-a.StartTimestamp())
	}
	// Goroutine 2 began while a ran (its b is no span): w links to a,
	// in a's trace; c nests in w; w panicked.
	var w2, w3 ptrace.Span
	for _, x := range w {
		if v, _ := x.Attributes().Get("calltrail.goroutine"); v.Int() == 2 {
			w2 = x
		} else {
			w3 = x
		}
	}
	if !w2.ParentSpanID().IsEmpty() || w2.Links().Len() != 1 || w2.Links().At(0).SpanID() != a.SpanID() || w2.Links().At(0).TraceID() != a.TraceID() || w2.TraceID() != a.TraceID() {
		t.Errorf("goroutine 2's w is not linked to a, in its trace")
	}
	if c2.ParentSpanID() != w2.SpanID() || c2.TraceID() != a.TraceID() {
		t.Errorf("goroutine 2's c is not in w")
	}
	if w2.Status().Code() != ptrace.StatusCodeError || w2.Status().Message() != "panic" {
		t.Errorf("w's status %v %q, want a panic", w2.Status().Code(), w2.Status().Message())
	}
	// Goroutine 3 began after main returned, which started it: it is
	// linked to main, in main's trace, as a handler's goroutine that
	// runs after the handler returned is in the request's.
	if w3.Links().Len() != 1 || w3.Links().At(0).SpanID() != main.SpanID() || w3.TraceID() != main.TraceID() {
		t.Errorf("goroutine 3's w is not linked to main, in its trace")
	}
}

func TestDeterministic(t *testing.T) {
	o := Options{Funcs: regexp.MustCompile(`.`), ID: "a"}
	x, y := spansOf(t, script, o), spansOf(t, script, o)
	o.ID = "b"
	z := spansOf(t, script, o)
	if x["main.a"][0].SpanID() != y["main.a"][0].SpanID() || x["main.a"][0].TraceID() != y["main.a"][0].TraceID() {
		t.Errorf("the same trace gave different ids")
	}
	if x["main.a"][0].SpanID() == z["main.a"][0].SpanID() || x["main.a"][0].TraceID() == z["main.a"][0].TraceID() {
		t.Errorf("another trace gave the same ids")
	}
}

// TestDeepRecursion has every call of a recursion 100,000 deep become a
// span: each nests in the one before, in one trace.
func TestDeepRecursion(t *testing.T) {
	const depth = 100_000
	r, err := tracefile.NewReader(bytes.NewReader(tracetest.Recursion(depth)))
	if err != nil {
		t.Fatal(err)
	}
	td, err := Spans(r, Options{Funcs: regexp.MustCompile(`^main\.rec$`)})
	if err != nil {
		t.Fatal(err)
	}
	ss := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	if ss.Len() != depth {
		t.Fatalf("%d spans, want %d", ss.Len(), depth)
	}
	roots := 0
	for i := 0; i < ss.Len(); i++ {
		s := ss.At(i)
		if s.ParentSpanID().IsEmpty() {
			roots++
		} else if i+1 < ss.Len() && s.ParentSpanID() != ss.At(i+1).SpanID() {
			t.Fatalf("span %d's parent is not the call that ended next", i)
		}
		if s.TraceID() != ss.At(0).TraceID() {
			t.Fatalf("span %d in another trace", i)
		}
	}
	if roots != 1 {
		t.Errorf("%d roots, want 1", roots)
	}
}

func TestLimit(t *testing.T) {
	data, _ := tracetest.Build(script)
	r, _ := tracefile.NewReader(bytes.NewReader(data))
	_, err := Spans(r, Options{Funcs: regexp.MustCompile(`.`), Limit: 3})
	var tm *ErrTooMany
	if !errors.As(err, &tm) || tm.Limit != 3 {
		t.Errorf("err %v, want ErrTooMany", err)
	}
}

func TestEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"otlp://collector:4318":          "http://collector:4318/v1/traces",
		"otlp://collector":               "http://collector:4318/v1/traces",
		"otlps://tempo.example:443/otlp": "https://tempo.example:443/otlp",
		"otlp://[::1]:4318/":             "http://[::1]:4318/v1/traces",
		"http://collector:4318":          "",
		"otlp:///v1/traces":              "",
	} {
		got, err := Endpoint(in)
		if (err != nil) != (want == "") || got != want {
			t.Errorf("Endpoint(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestPost sends 5,000 spans in three requests, the first answered 503
// once: Post retries it.
func TestPost(t *testing.T) {
	var requests, spans atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		body, _ := io.ReadAll(r.Body)
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if req.Traces().ResourceSpans().At(0).Resource().Attributes().Len() == 0 {
			http.Error(w, "no resource", http.StatusBadRequest)
			return
		}
		spans.Add(int64(req.Traces().SpanCount()))
		out, _ := ptraceotlp.NewExportResponse().MarshalProto()
		w.Write(out)
	}))
	defer srv.Close()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "x")
	ss := rs.ScopeSpans().AppendEmpty().Spans()
	for i := 0; i < 5000; i++ {
		ss.AppendEmpty().SetName("f")
	}
	if err := Post(context.Background(), srv.Client(), srv.URL, td); err != nil {
		t.Fatal(err)
	}
	if requests.Load() != 4 || spans.Load() != 5000 {
		t.Errorf("%d requests with %d spans, want 4 with 5000", requests.Load(), spans.Load())
	}
}
