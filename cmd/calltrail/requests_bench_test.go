//go:build unix

package main

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
)

// BenchmarkRequestSpans serves requests of testdata/orders, a service
// whose requests otelhttp and the OpenTelemetry SDK put in spans, built by
// calltrail build and recording to a file: with its spans recorded (the
// default) and without (--otel=false), in one run, so that the cost of
// recording a request's two spans is the difference of the two, per
// request. The query's sleep is off: a request is the service's code, the
// SDK's and calltrail's. Each pair runs twice: without a span processor
// of the service's own, where calltrail's makes the SDK build a snapshot
// of each span it would otherwise skip, and exporting (to an exporter
// that drops the spans), as a service that sends its spans somewhere
// does, where the SDK builds it anyway. Runs interleaved, for benchstat:
//
//	go test -c -o orders.test ./cmd/calltrail && cd cmd/calltrail
//	for i in $(seq 6); do ../../orders.test -test.run '^$' -test.bench RequestSpans -test.benchtime 8000x; done
func BenchmarkRequestSpans(b *testing.B) {
	bins := map[string]string{"spans": buildOrders(b), "nospans": buildOrders(b, "--otel=false")}
	for _, run := range []struct{ name, bin, export string }{
		{"spans", "spans", "false"}, {"nospans", "nospans", "false"},
		{"exporting/spans", "spans", "true"}, {"exporting/nospans", "nospans", "true"},
	} {
		b.Run(run.name, func(b *testing.B) {
			srv, addr := startOrders(b, bins[run.bin], []string{"CALLTRAIL_OUT=" + filepath.Join(b.TempDir(), "orders.trace")}, "-query", "0", "-export-discard="+run.export)
			defer srv.Wait()
			client := &http.Client{}
			get := func(path string) {
				req, _ := http.NewRequest("GET", fmt.Sprintf("http://%s%s", addr, path), nil)
				req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			for range 200 {
				get("/orders/4") // warm the connection and the service
			}
			b.ResetTimer()
			for range b.N {
				get("/orders/4")
			}
			b.StopTimer()
			get("/quit")
		})
	}
}
