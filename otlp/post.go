package otlp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// Endpoint reads the URL of an OTLP receiver, otlp://HOST:PORT[/PATH]
// for plain HTTP or otlps://HOST:PORT[/PATH] for HTTPS, and returns the
// address spans are posted to: PATH defaults to OTLP's /v1/traces, and
// PORT to OTLP/HTTP's 4318.
func Endpoint(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	var scheme string
	switch u.Scheme {
	case "otlp":
		scheme = "http"
	case "otlps":
		scheme = "https"
	default:
		return "", fmt.Errorf("%q: want otlp://HOST:PORT or otlps://HOST:PORT", s)
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("%q: no host", s)
	}
	host := u.Host
	if u.Port() == "" {
		host += ":4318"
	}
	path := u.Path
	if path == "" || path == "/" {
		path = "/v1/traces"
	}
	return (&url.URL{Scheme: scheme, Host: host, Path: path}).String(), nil
}

// Batch is how many spans Post sends in one request.
const Batch = 2000

// Post sends the spans of td to an OTLP/HTTP receiver at endpoint, as
// binary protobuf, in requests of at most Batch spans. It retries a
// request the receiver says to retry (429, 502, 503, 504), waiting as
// it asks, and returns the first error it cannot get past, including
// spans the receiver rejected.
func Post(ctx context.Context, client *http.Client, endpoint string, td ptrace.Traces) error {
	for _, part := range split(td, Batch) {
		body, err := ptraceotlp.NewExportRequestFromTraces(part).MarshalProto()
		if err != nil {
			return err
		}
		if err := post(ctx, client, endpoint, body); err != nil {
			return err
		}
	}
	return nil
}

func post(ctx context.Context, client *http.Client, endpoint string, body []byte) error {
	wait := 500 * time.Millisecond
	for try := 1; ; try++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return err
		}
		switch resp.StatusCode {
		case http.StatusOK:
			r := ptraceotlp.NewExportResponse()
			if err := r.UnmarshalProto(data); err != nil {
				return fmt.Errorf("%s: reading its answer: %w", endpoint, err)
			}
			if n := r.PartialSuccess().RejectedSpans(); n > 0 {
				return fmt.Errorf("%s rejected %d spans: %s", endpoint, n, r.PartialSuccess().ErrorMessage())
			}
			return nil
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			if try == 5 {
				break
			}
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
				wait = time.Duration(s) * time.Second
			}
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return ctx.Err()
			}
			wait *= 2
			continue
		}
		msg := strings.TrimSpace(string(data))
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/") && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			msg = "" // a protobuf status, not worth decoding for a message
		}
		return fmt.Errorf("%s: %s %s", endpoint, resp.Status, msg)
	}
}

// split cuts td into parts of at most n spans each, every part with its
// spans' resource and scope.
func split(td ptrace.Traces, n int) []ptrace.Traces {
	var parts []ptrace.Traces
	var cur ptrace.Traces
	count := 0
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			var to ptrace.SpanSlice
			for k := 0; k < ss.Spans().Len(); k++ {
				if count == 0 || count == n || k == 0 {
					if count == 0 || count == n {
						cur = ptrace.NewTraces()
						parts = append(parts, cur)
						count = 0
					}
					nrs := cur.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(nrs.Resource())
					nrs.SetSchemaUrl(rs.SchemaUrl())
					nss := nrs.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(nss.Scope())
					nss.SetSchemaUrl(ss.SchemaUrl())
					to = nss.Spans()
				}
				ss.Spans().At(k).CopyTo(to.AppendEmpty())
				count++
			}
		}
	}
	return parts
}
