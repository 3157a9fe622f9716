package live

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestClientURL(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"127.0.0.1:6060", "http://127.0.0.1:6060/debug/calltrail/snapshot?last=5s"},
		{"http://127.0.0.1:6060", "http://127.0.0.1:6060/debug/calltrail/snapshot?last=5s"},
		{"http://127.0.0.1:6060/debug/calltrail/", "http://127.0.0.1:6060/debug/calltrail/snapshot?last=5s"},
		{"https://svc.example/admin", "https://svc.example/admin/debug/calltrail/snapshot?last=5s"},
		{"https://svc.example/admin/debug/calltrail", "https://svc.example/admin/debug/calltrail/snapshot?last=5s"},
	} {
		c := Client{Addr: tc.addr}
		if got, err := c.URL("snapshot", url.Values{"last": {"5s"}}); err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.addr, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "http://", "::1:6060x%"} {
		c := Client{Addr: bad}
		if _, err := c.URL("snapshot", nil); !errors.Is(err, ErrAddr) {
			t.Errorf("%q: %v, want ErrAddr", bad, err)
		}
	}
}

// TestClientFetch: what changes the program's state goes by POST, the
// rest by GET; the token goes as a bearer token; an answer past MaxBody
// and an answer other than 200 are errors that say so.
func TestClientFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case Prefix + "big":
			w.Write([]byte(strings.Repeat("x", 2000)))
		default:
			w.Write([]byte(r.Method + " " + r.URL.Path))
		}
	}))
	defer srv.Close()
	c := Client{Addr: srv.URL, Token: "s3cret", MaxBody: 1000}
	for path, method := range map[string]string{"snapshot": "GET", "counters": "GET", "capture": "POST", "on": "POST", "off": "POST"} {
		got, err := c.Fetch(context.Background(), path, nil)
		if want := method + " " + Prefix + path; err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := c.Fetch(context.Background(), "big", nil); err == nil || !strings.Contains(err.Error(), "sent more than") {
		t.Errorf("an answer past MaxBody: %v", err)
	}
	c.Token = ""
	if _, err := c.Fetch(context.Background(), "snapshot", nil); err == nil || !strings.Contains(err.Error(), "401 Unauthorized: no token") {
		t.Errorf("a refusal: %v", err)
	}
	// Another server, such as the program's own: no 404 page, a
	// sentence saying where to point.
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	c = Client{Addr: other.URL}
	if _, err := c.Fetch(context.Background(), "counters", nil); err == nil || !strings.Contains(err.Error(), "serves no calltrail endpoint (404 Not Found for counters)") {
		t.Errorf("another server: %v", err)
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<!DOCTYPE html><title>Welcome</title>"))
	}))
	defer page.Close()
	c = Client{Addr: page.URL}
	if _, err := c.Fetch(context.Background(), "snapshot", nil); err == nil || !strings.Contains(err.Error(), "serves no calltrail endpoint (200 OK for snapshot)") {
		t.Errorf("a catch-all page: %v", err)
	}
}
