package live

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/calltrail/calltrail"
	"github.com/calltrail/calltrail/internal/endpoint"
	"github.com/calltrail/calltrail/internal/httpguard"
	_ "github.com/calltrail/calltrail/profiles" // for captures with the CPU profile
)

// Prefix is where Register puts the handlers.
const Prefix = "/debug/calltrail/"

// MaxCapture bounds the seconds of a capture.
const MaxCapture = 600

// Register adds the handlers to mux under Prefix, with the token of
// CALLTRAIL_HTTP_TOKEN (see Handler).
func Register(mux *http.ServeMux) {
	mux.Handle(Prefix, Handler(os.Getenv("CALLTRAIL_HTTP_TOKEN")))
}

// Handler returns the handlers, which expect paths under Prefix, behind
// one policy, wherever they are served:
//
//   - With a token, a request without "Authorization: Bearer TOKEN" is
//     refused. Without one, a request whose Host header names anything
//     but loopback is: a page whose name an attacker makes resolve to
//     127.0.0.1 (DNS rebinding) must not read the program's calls, and a
//     service serving the handlers to the network needs a token.
//   - A request a browser sends for a page of another origin (its Origin
//     or Sec-Fetch-Site header says so) is refused: a page must not
//     switch recording or take a capture.
//   - What changes the program's state (on, off, capture) takes POST
//     only; GET never changes anything.
func Handler(token string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(Prefix+"snapshot", snapshot)
	mux.HandleFunc(Prefix+"capture", capture)
	mux.HandleFunc(Prefix+"counters", counters)
	mux.HandleFunc(Prefix+"on", switchTo(true))
	mux.HandleFunc(Prefix+"off", switchTo(false))
	token = strings.TrimSpace(token) // as header values are
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case httpguard.CrossSite(r):
			http.Error(w, "calltrail: requests from web pages of another origin are refused", http.StatusForbidden)
		case token == "" && !httpguard.LocalHost(r.Host):
			http.Error(w, "calltrail: the Host header must name loopback; serving another host needs CALLTRAIL_HTTP_TOKEN", http.StatusForbidden)
		case token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1:
			http.Error(w, "calltrail: this endpoint wants the token of CALLTRAIL_HTTP_TOKEN (Authorization: Bearer TOKEN)", http.StatusUnauthorized)
		default:
			mux.ServeHTTP(w, r)
		}
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
	if r.Method != http.MethodPost {
		// A capture switches a paused program on and takes its CPU
		// profiler: a change of state, which an <img> must not make.
		http.Error(w, "calltrail: POST to capture", http.StatusMethodNotAllowed)
		return
	}
	n, err := strconv.ParseFloat(r.URL.Query().Get("seconds"), 64)
	if err != nil || !(n > 0 && n <= MaxCapture) { // NaN too
		http.Error(w, fmt.Sprintf("calltrail: seconds wants a number of seconds more than 0 and at most %d", MaxCapture), http.StatusBadRequest)
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
// that an error found before any is written can still be a status, and
// gives the client WriteTimeout to take the trace.
type traceWriter struct {
	w       http.ResponseWriter
	started bool
}

func (t *traceWriter) Write(p []byte) (int, error) {
	if !t.started {
		t.started = true
		t.w.Header().Set("Content-Type", "application/octet-stream")
		t.w.Header().Set("Content-Disposition", `attachment; filename="calltrail.out"`)
		// A client that does not read would keep the window's
		// segments alive, which the recorder has dropped since.
		http.NewResponseController(t.w).SetWriteDeadline(time.Now().Add(WriteTimeout))
	}
	return t.w.Write(p)
}

// MaxInFlight bounds the snapshots and captures served at once, and
// WriteTimeout the time a client has to read one: each holds the
// segments of its window, which the recorder would otherwise let go, so
// that slow or idle clients cannot make the program hold more than a few
// windows.
const (
	MaxInFlight  = 4
	WriteTimeout = time.Minute
)

var inFlight = make(chan struct{}, MaxInFlight)

func write(w http.ResponseWriter, fn func(*traceWriter) (calltrail.Window, error)) {
	select {
	case inFlight <- struct{}{}:
		defer func() { <-inFlight }()
	default:
		http.Error(w, fmt.Sprintf("calltrail: %d snapshots or captures are being served already; try again when one is done", MaxInFlight), http.StatusServiceUnavailable)
		return
	}
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
	endpoint.Linked.Store(true)
	if addr := os.Getenv("CALLTRAIL_HTTP"); addr != "" {
		listenEnv(addr, os.Getenv("CALLTRAIL_HTTP_TOKEN"), os.Stderr)
	}
}

// listenEnv serves as CALLTRAIL_HTTP=addr asks, saying on stderr what
// went wrong: another host than loopback without a token is served on
// loopback only, which needs none, so that the window stays within reach
// of the program's own machine. It returns the address served, nil for
// none.
func listenEnv(addr, token string, stderr io.Writer) net.Addr {
	a, err := Listen(addr, token)
	if errors.Is(err, errNeedsToken) {
		_, port, _ := net.SplitHostPort(addr)
		if a, err = Listen(net.JoinHostPort("127.0.0.1", port), token); err == nil {
			fmt.Fprintf(stderr, "calltrail: CALLTRAIL_HTTP=%s: another host than loopback needs CALLTRAIL_HTTP_TOKEN: serving %s only\n", addr, a)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "calltrail: CALLTRAIL_HTTP=%s: %v\n", addr, err)
		return nil
	}
	return a
}

// errNeedsToken is Listen's error for another host than loopback without
// a token.
var errNeedsToken = errors.New("needs CALLTRAIL_HTTP_TOKEN: without it only loopback is served")

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
		return nil, fmt.Errorf("listening on %s %w", host, errNeedsToken)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: Handler(token), ReadHeaderTimeout: 10 * time.Second}
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
