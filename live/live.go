package live

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/calltrail/calltrail"
)

// Prefix is where Register puts the handlers.
const Prefix = "/debug/calltrail/"

// MaxCapture bounds the seconds of a capture.
const MaxCapture = 600

// Register adds the handlers to mux under Prefix.
func Register(mux *http.ServeMux) {
	mux.Handle(Prefix, Handler(os.Getenv("CALLTRAIL_HTTP_TOKEN")))
}

// Handler returns the handlers, which expect paths under Prefix. With a
// token, a request without "Authorization: Bearer TOKEN" is refused.
func Handler(token string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(Prefix+"snapshot", snapshot)
	mux.HandleFunc(Prefix+"capture", capture)
	mux.HandleFunc(Prefix+"counters", counters)
	mux.HandleFunc(Prefix+"on", switchTo(true))
	mux.HandleFunc(Prefix+"off", switchTo(false))
	if token == "" {
		return mux
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, "calltrail: this endpoint wants the token of CALLTRAIL_HTTP_TOKEN (Authorization: Bearer TOKEN)", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func snapshot(w http.ResponseWriter, r *http.Request) {
	if !get(w, r) {
		return
	}
	var last time.Duration
	if v := r.URL.Query().Get("last"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			http.Error(w, "calltrail: last wants a duration, such as 5s", http.StatusBadRequest)
			return
		}
		last = d
	}
	write(w, func(tw *traceWriter) (calltrail.Window, error) {
		if last > 0 {
			return calltrail.SnapshotLast(tw, last)
		}
		return calltrail.Snapshot(tw)
	})
}

func capture(w http.ResponseWriter, r *http.Request) {
	if !get(w, r) {
		return
	}
	n, err := strconv.ParseFloat(r.URL.Query().Get("seconds"), 64)
	if err != nil || n <= 0 || n > MaxCapture {
		http.Error(w, fmt.Sprintf("calltrail: seconds wants a number of seconds, at most %d", MaxCapture), http.StatusBadRequest)
		return
	}
	var profiles []string
	if v := r.URL.Query().Get("profiles"); v != "" {
		profiles = strings.Split(v, ",")
	}
	write(w, func(tw *traceWriter) (calltrail.Window, error) {
		return calltrail.CaptureContext(r.Context(), tw, time.Duration(n*float64(time.Second)), profiles...)
	})
}

// traceWriter sends the headers before the first byte of the trace, so
// that an error found before any is written can still be a status.
type traceWriter struct {
	w       http.ResponseWriter
	started bool
}

func (t *traceWriter) Write(p []byte) (int, error) {
	if !t.started {
		t.started = true
		t.w.Header().Set("Content-Type", "application/octet-stream")
		t.w.Header().Set("Content-Disposition", `attachment; filename="calltrail.out"`)
	}
	return t.w.Write(p)
}

func write(w http.ResponseWriter, fn func(*traceWriter) (calltrail.Window, error)) {
	tw := &traceWriter{w: w}
	if _, err := fn(tw); err != nil && !tw.started {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	}
}

func counters(w http.ResponseWriter, r *http.Request) {
	if !get(w, r) {
		return
	}
	c := calltrail.ReadCounters()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(Counters{
		Recording: c.Recording, Mode: c.Mode, ElapsedNs: int64(c.Elapsed), Calls: c.Calls, Dropped: c.Dropped,
		Waits: c.Waits, HeldNs: int64(c.Held), RingBytes: c.RingBytes,
		WindowStartNs: int64(c.Window.Start), WindowEndNs: int64(c.Window.End), WindowBytes: c.Window.Bytes,
		WindowBudget: c.Window.Budget, WindowDropped: c.Window.Dropped, PerSecond: c.PerSecond,
	})
}

// Counters is the JSON the counters endpoint sends.
type Counters struct {
	Recording     bool    `json:"recording"`
	Mode          string  `json:"mode"` // file, flight, or off
	ElapsedNs     int64   `json:"elapsed_ns"`
	Calls         uint64  `json:"calls"`
	Dropped       uint64  `json:"dropped"`
	Waits         uint64  `json:"waits"`
	HeldNs        int64   `json:"held_ns"`
	RingBytes     int     `json:"ring_bytes"`
	WindowStartNs int64   `json:"window_start_ns"`
	WindowEndNs   int64   `json:"window_end_ns"`
	WindowBytes   int     `json:"window_bytes"`
	WindowBudget  int     `json:"window_budget"`
	WindowDropped uint64  `json:"window_dropped"` // segments dropped for room
	PerSecond     float64 `json:"calls_per_second"`
}

func switchTo(on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "calltrail: POST to switch recording", http.StatusMethodNotAllowed)
			return
		}
		if on {
			calltrail.Resume()
		} else {
			calltrail.Pause()
		}
		fmt.Fprintf(w, "recording %v\n", calltrail.ReadCounters().Recording)
	}
}

func get(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "calltrail: GET only", http.StatusMethodNotAllowed)
		return false
	}
	return true
}

func init() {
	if addr := os.Getenv("CALLTRAIL_HTTP"); addr != "" {
		if _, err := Listen(addr, os.Getenv("CALLTRAIL_HTTP_TOKEN")); err != nil {
			fmt.Fprintf(os.Stderr, "calltrail: CALLTRAIL_HTTP=%s: %v\n", addr, err)
		}
	}
}

// Listen serves the handlers on addr in a goroutine of their own, and
// returns the address it listens on. An address without a host (":6060")
// means loopback; another host than loopback needs a token.
func Listen(addr, token string) (net.Addr, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !loopback(host) && token == "" {
		return nil, fmt.Errorf("listening on %s needs CALLTRAIL_HTTP_TOKEN: without it only loopback is served", host)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, err
	}
	h := Handler(token)
	if loopback(host) {
		h = checkHost(h, ln.Addr().String())
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return ln.Addr(), nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkHost refuses requests whose Host header names anything but
// loopback or the listener's address: a web page that makes its name
// resolve to 127.0.0.1 must not read the program's calls.
func checkHost(h http.Handler, addr string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hh, _, err := net.SplitHostPort(host); err == nil {
			host = hh
		}
		if r.Host != addr && !loopback(strings.Trim(host, "[]")) {
			http.Error(w, "calltrail: the Host header must name loopback", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
