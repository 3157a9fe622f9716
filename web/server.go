package web

import (
	"compress/gzip"
	"embed"
	"encoding/json"
	"io/fs"
	"log"
	"net/http"
	"path"
	"strings"

	"github.com/calltrail/calltrail/internal/httpguard"
)

//go:embed assets
var assets embed.FS

// Server answers the web UI's requests about one trace, and optionally a
// base trace it is compared with.
type Server struct {
	t    *Trace
	base *Trace // nil without a base trace

	// AnyHost lets requests name the server by any host name, for a
	// server listening beyond this machine; otherwise only addresses and
	// localhost are answered.
	AnyHost bool

	all *analysed // the whole trace's analysis, as the views serve it
	log *log.Logger
}

// New returns a server for trace t, compared with base if it is not nil.
// Errors are logged to logger, one line each; nil discards them.
func New(t, base *Trace, logger *log.Logger) *Server {
	if logger == nil {
		logger = log.New(discard{}, "", 0)
	}
	return &Server{t: t, base: base, all: &analysed{Trace: t.Trace, took: t.LoadTime}, log: logger}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", s.page)
	mux.HandleFunc("/static/", s.static)
	for name, h := range map[string]func(w http.ResponseWriter, r *http.Request, p *params) (any, error){
		"overview": s.overview,
		"names":    s.funcNames,
		"flame":    s.flameGraph,
		"func":     s.function,
		"lanes":    s.laneList,
		"lane":     s.laneInfo,
		"timeline": s.timeline,
		"tree":     s.tree,
		"requests": s.requestList,
		"failed":   s.failedCalls,
	} {
		mux.Handle("/api/"+name, api(h))
	}
	return guard(mux, s.log, s.AnyHost)
}

// guard answers only GET and HEAD, turns a panic into a 500 with a
// short message, and sets headers that keep the page to its own assets.
func guard(next http.Handler, logger *log.Logger, anyHost bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				logger.Printf("%s %s: internal error: %v", r.Method, r.URL.Path, v)
				http.Error(w, "internal error", http.StatusInternalServerError)
			}
		}()
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if !anyHost && !httpguard.LocalHost(r.Host) {
			// A page elsewhere could point a name it controls at
			// 127.0.0.1 (DNS rebinding) and read the trace.
			http.Error(w, "unknown host "+r.Host, http.StatusForbidden)
			return
		}
		if httpguard.CrossSite(r) && r.Header.Get("Sec-Fetch-Mode") != "navigate" {
			// A page of another site asking, in the background, as
			// the control endpoint refuses it too; a link followed
			// from one opens the UI.
			http.Error(w, "a request from another site's page", http.StatusForbidden)
			return
		}
		h := w.Header()
		// No page of another site frames the UI either (clickjacking):
		// a navigation it may make, a frame it may not.
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	s.asset(w, r, "index.html")
}

// static serves a file of the embedded assets, by name: the URL names no
// file on disk, and embed.FS refuses names with "..".
func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/static/")
	if !fs.ValidPath(name) || strings.Contains(name, "/") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	s.asset(w, r, name)
}

// assetTypes are the assets' content types, fixed rather than read from
// the system's table: on some systems that maps .js to text/plain, and
// with nosniff the browser would then not run the page's scripts.
var assetTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
}

func (s *Server) asset(w http.ResponseWriter, r *http.Request, name string) {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	ct, ok := assetTypes[path.Ext(name)]
	if !ok {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache")
	writeBody(w, r, b)
}

// httpError is an error with the status to answer it with.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(msg string) error { return &httpError{http.StatusBadRequest, msg} }
func notFound(msg string) error   { return &httpError{http.StatusNotFound, msg} }

// api adapts a handler that returns a value to encode as JSON, or an
// error: a malformed parameter is a 400, an *httpError its own status.
func api(h func(w http.ResponseWriter, r *http.Request, p *params) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := &params{q: r.URL.Query()}
		v, err := h(w, r, p)
		if err == nil && p.err != nil {
			err = badRequest(p.err.Error())
		}
		if err != nil {
			code := http.StatusInternalServerError
			if he, ok := err.(*httpError); ok {
				code = he.code
			}
			http.Error(w, err.Error(), code)
			return
		}
		b, ok := v.([]byte)
		if !ok {
			if b, err = json.Marshal(v); err != nil {
				http.Error(w, "internal error", http.StatusInternalServerError)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		writeBody(w, r, b)
	})
}

// writeBody writes b, gzipped when it is large and the client takes gzip:
// timeline and flame responses shrink several times.
func writeBody(w http.ResponseWriter, r *http.Request, b []byte) {
	if len(b) < 4096 || !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Write(b)
		return
	}
	w.Header().Set("Content-Encoding", "gzip")
	w.Header().Add("Vary", "Accept-Encoding")
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	zw.Write(b)
	zw.Close()
}
