package httpguard

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// LocalHost reports whether a request's Host header, with or without a
// port, is one DNS rebinding cannot produce: localhost, a name under
// .localhost, or an IP address. A server on loopback that answers only
// these cannot be read by a page that points a name it controls at
// 127.0.0.1.
func LocalHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.Trim(host, "[]")
	return host == "localhost" || strings.HasSuffix(host, ".localhost") || net.ParseIP(host) != nil
}

// CrossSite reports whether a browser sent r for a page of another
// origin. Browsers send Sec-Fetch-Site with every request, and Origin
// with POSTs; command-line clients send neither.
func CrossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	return err != nil || u.Host != r.Host
}
