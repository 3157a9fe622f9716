// Command rpc is a small request/response server and a load client over
// loopback (seed 001: an RPC framework's flame graph). In slow mode the
// request path formats a debug log line nobody reads, and dispatches to
// its handler through reflection; mode reflect has the log line removed
// but dispatches through reflection still; fixed mode calls the handler.
//
//	go run ./cmd/calltrail run ./examples/rpc -mode slow
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"reflect"
	"sync"
	"time"
)

type service struct{}

// Echo is the handler, with the signature RPC handlers have: it sums the
// request's bytes.
func (service) Echo(ctx context.Context, req []byte, opts map[string]string) (uint64, error) {
	var s uint64
	for _, b := range req {
		s += uint64(b)
	}
	return s, ctx.Err()
}

// nowhere drops what is written to it. (A log.Logger writing to io.Discard
// would skip formatting altogether; one writing to a file nobody reads
// would not.)
type nowhere struct{}

func (nowhere) Write(p []byte) (int, error) { return len(p), nil }

var (
	debug    = log.New(nowhere{}, "debug ", log.LstdFlags|log.Lmicroseconds)
	handlers = map[string]reflect.Value{"Echo": reflect.ValueOf(service{}).MethodByName("Echo")}
)

// request is what the debug line describes.
type request struct {
	Size    int
	Payload []byte
	At      time.Time
	Meta    map[string]string
}

// handle answers one request.
func handle(req []byte, mode string) uint64 {
	if mode == "slow" {
		// A debug line left in the request path: written nowhere, but
		// formatted every time.
		debug.Printf("request %+v", request{Size: len(req), Payload: req, At: time.Now(), Meta: map[string]string{"method": "Echo"}})
	}
	ctx := context.Background()
	if mode == "slow" || mode == "reflect" {
		out := handlers["Echo"].Call([]reflect.Value{reflect.ValueOf(ctx), reflect.ValueOf(req), reflect.ValueOf(opts)})
		return out[0].Uint()
	}
	n, _ := service{}.Echo(ctx, req, opts)
	return n
}

var opts = map[string]string{"codec": "binary"}

func serve(c net.Conn, mode string) {
	defer c.Close()
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	var hdr [4]byte
	req := make([]byte, 0, 256)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		req = req[:binary.BigEndian.Uint32(hdr[:])]
		if _, err := io.ReadFull(r, req); err != nil {
			return
		}
		var resp [8]byte
		binary.BigEndian.PutUint64(resp[:], handle(req, mode))
		w.Write(resp[:])
		if r.Buffered() == 0 {
			w.Flush()
		}
	}
}

// window is how many requests a client sends before reading the answers,
// as pipelining clients do.
const window = 64

// client sends n requests, window at a time, and reads every answer.
func client(addr string, n int) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	req := make([]byte, 4+64)
	binary.BigEndian.PutUint32(req, 64)
	var resp [8]byte
	for sent := 0; sent < n; sent += window {
		k := min(window, n-sent)
		for i := 0; i < k; i++ {
			req[4] = byte(sent + i)
			w.Write(req)
		}
		if err := w.Flush(); err != nil {
			panic(err)
		}
		for i := 0; i < k; i++ {
			if _, err := io.ReadFull(r, resp[:]); err != nil {
				panic(err)
			}
		}
	}
}

func main() {
	mode := flag.String("mode", "slow", "slow, reflect or fixed")
	clients := flag.Int("clients", 4, "concurrent clients")
	requests := flag.Int("requests", 100000, "requests per client")
	flag.Parse()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c, *mode)
		}
	}()
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < *clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client(ln.Addr().String(), *requests)
		}()
	}
	wg.Wait()
	took := time.Since(start)
	n := *clients * *requests
	fmt.Printf("took %d ms for %d requests\nthroughput (TPS) %.0f\n", took.Milliseconds(), n, float64(n)/took.Seconds())
}
