// Command orders is a small HTTP service that uses OpenTelemetry: the
// SDK, with otelhttp starting a server span for each request, under the
// caller's span when the request carries a traceparent header. calltrail's
// tests build it, unchanged, to check that every call is tied to the
// request it ran for.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

var tracer = otel.Tracer("orders")

func main() {
	addrFile := flag.String("addr-file", "", "write the address served to this file")
	flag.DurationVar(&queryTime, "query", time.Millisecond, "how long the query of an order takes, per item")
	discard := flag.Bool("export-discard", false, "export the service's spans, in batches, to an exporter that drops them: the SDK's work of a service that exports, without a collector")
	flag.Parse()
	opts := []sdktrace.TracerProviderOption{sdktrace.WithSampler(sdktrace.AlwaysSample())}
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" {
		// The service's own spans go to the OpenTelemetry Collector.
		exp, err := otlptracehttp.New(context.Background())
		if err != nil {
			log.Fatal(err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	} else if *discard {
		opts = append(opts, sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{}
	mux := http.NewServeMux()
	mux.HandleFunc("/orders/", orders)
	// Serve returns as soon as Shutdown begins, before the /quit request
	// has ended its span: the spans are flushed once Shutdown has waited
	// for every request, that one included.
	stopped := make(chan struct{})
	mux.HandleFunc("/quit", func(w http.ResponseWriter, r *http.Request) {
		go func() {
			srv.Shutdown(context.Background())
			close(stopped)
		}()
	})
	srv.Handler = otelhttp.NewHandler(mux, "GET /orders")
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(ln.Addr().String()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		log.Fatal(err)
	}
	<-stopped
	if err := tp.Shutdown(context.Background()); err != nil {
		log.Fatal(err)
	}
}

// orders answers /orders/N[?spin=DURATION]: it loads order N, pricing
// its N items in goroutines of its own, each working on the CPU for spin,
// and writes the total.
func orders(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Path[len("/orders/"):])
	var spin time.Duration
	if s := r.URL.Query().Get("spin"); s != "" && err == nil {
		spin, err = time.ParseDuration(s)
	}
	if err != nil || n < 1 || n > 100 || spin < 0 || spin > time.Second {
		http.Error(w, "bad order", http.StatusBadRequest)
		return
	}
	total := load(r.Context(), n, spin)
	fmt.Fprintln(w, total)
}

// load queries order n in a span of its own, then prices its items, one
// goroutine each.
func load(ctx context.Context, n int, spin time.Duration) int {
	ctx, span := tracer.Start(ctx, "db.query")
	query(n)
	span.End()
	prices := make([]int, n)
	var wg sync.WaitGroup
	for i := range prices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prices[i] = price(i, spin)
		}()
	}
	wg.Wait()
	return sum(prices)
}

var queryTime time.Duration

// query stands for a database's time.
func query(n int) {
	if queryTime > 0 {
		time.Sleep(time.Duration(n) * queryTime)
	}
}

// price works out item i's price, working on the CPU for about spin: a
// step of work a nanosecond, whatever else the machine runs, so that the
// CPU time is the same on a busy machine.
func price(i int, spin time.Duration) int {
	x := uint64(i)
	for range spin.Nanoseconds() {
		x = x*6364136223846793005 + 1442695040888963407
	}
	worked.Add(x) // so that the compiler keeps the work
	return i*10 + 1
}

var worked atomic.Uint64

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}
