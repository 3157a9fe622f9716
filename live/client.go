package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// A Client asks a program's control endpoint for its calls, as calltrail
// record, top and collect do.
type Client struct {
	// Addr is the endpoint: host:port, or a URL, with or without Prefix.
	Addr string
	// Token, if not empty, is sent as "Authorization: Bearer TOKEN".
	Token string
	// Timeout bounds each request, its body included; 0 for none.
	Timeout time.Duration
	// MaxBody bounds what the endpoint may send, held in memory; 0 for
	// DefaultMaxBody.
	MaxBody int64
}

// DefaultMaxBody is the most a Client reads of an answer unless told:
// more than any flight recorder's window, whose memory CALLTRAIL_BUFFER
// bounds, so that an endpoint that sends without end cannot take all of
// the client's.
const DefaultMaxBody = 1 << 30

// ErrAddr says a Client's Addr is neither host:port nor a URL.
var ErrAddr = errors.New("want host:port or a URL")

// changes lists the paths that change the program's state: the handlers
// take them by POST only, and a Client asks for them so.
var changes = map[string]bool{"capture": true, "on": true, "off": true}

// URL returns the URL of the endpoint's path ("snapshot", "capture",
// "counters", "on", "off") with the query q.
func (c *Client) URL(path string, q url.Values) (string, error) {
	addr := c.Addr
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q: %w", c.Addr, ErrAddr)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(u.Path+"/", Prefix) {
		u.Path += strings.TrimSuffix(Prefix, "/")
	}
	u.Path += "/" + path
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Fetch asks for the endpoint's path with the query q, by POST for what
// changes the program's state and GET for the rest, and returns the
// answer's body, or an error saying what the endpoint answered.
func (c *Client) Fetch(ctx context.Context, path string, q url.Values) ([]byte, error) {
	u, err := c.URL(path, q)
	if err != nil {
		return nil, err
	}
	method := http.MethodGet
	if changes[path] {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := (&http.Client{Timeout: c.Timeout}).Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%s: %v", c.Addr, err)
	}
	defer resp.Body.Close()
	limit := c.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Addr, err)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%s sent more than %d MiB: no flight recorder's window is that large (CALLTRAIL_BUFFER bounds it)", c.Addr, limit>>20)
	}
	ours := bytes.HasPrefix(body, []byte("calltrail: ")) // the endpoint's refusals start so
	switch {
	case !ours && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotImplemented),
		strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html"):
		// Every path the endpoint serves is always there, for the
		// method asked, and it writes no HTML: this is another server,
		// perhaps one whose catch-all page answers 200.
		return nil, fmt.Errorf("%s serves no calltrail endpoint (%s for %s): give the address CALLTRAIL_HTTP names, or that of the server the program passed to live.Register", c.Addr, resp.Status, path)
	case resp.StatusCode != http.StatusOK:
		msg := strings.TrimSpace(string(body))
		if len(msg) > 300 {
			msg = msg[:300]
		}
		return nil, fmt.Errorf("%s answered %s: %s", c.Addr, resp.Status, msg)
	}
	return body, nil
}
