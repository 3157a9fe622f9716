package httpguard

import (
	"net/http/httptest"
	"testing"
)

func TestLocalHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "localhost:8080": true, "app.localhost": true,
		"127.0.0.1": true, "127.0.0.1:80": true, "[::1]:8080": true, "::1": true, "10.0.0.5:9": true,
		"evil.example": false, "evil.example:8080": false, "localhost.evil.example": false, "": false,
	} {
		if got := LocalHost(host); got != want {
			t.Errorf("LocalHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestCrossSite(t *testing.T) {
	for _, tc := range []struct {
		site, origin string
		want         bool
	}{
		{"", "", false},            // curl
		{"none", "", false},        // typed in the address bar
		{"same-origin", "", false}, // the page's own fetch
		{"cross-site", "", true},   // an <img> on another site
		{"same-site", "", true},    // another port of the same host
		{"", "http://evil.example", true},
		{"", "http://127.0.0.1:8080", false},
		{"", "::not a url", true},
	} {
		r := httptest.NewRequest("POST", "http://127.0.0.1:8080/x", nil)
		if tc.site != "" {
			r.Header.Set("Sec-Fetch-Site", tc.site)
		}
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if got := CrossSite(r); got != tc.want {
			t.Errorf("Sec-Fetch-Site %q, Origin %q: %v, want %v", tc.site, tc.origin, got, tc.want)
		}
	}
}
