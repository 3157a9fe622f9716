package live

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/calltrail/calltrail"
)

func TestMain(m *testing.M) {
	// With the calltrail tag, this test binary traces itself into
	// calltrail.out here: no need.
	if calltrail.Enabled {
		calltrail.Stop()
		if os.Getenv("CALLTRAIL_OUT") == "" {
			os.Remove("calltrail.out")
		}
	}
	os.Exit(m.Run())
}

func fetch(t *testing.T, url string, header map[string]string) (int, string) {
	t.Helper()
	return send(t, http.MethodGet, url, header)
}

func send(t *testing.T, method, url string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestListenLoopback checks that an address without a host listens on
// loopback, and that requests naming another host are refused: a web
// page that makes its own name resolve to 127.0.0.1 must not read the
// program's calls.
func TestListenLoopback(t *testing.T) {
	addr, err := Listen(":0", "")
	if err != nil {
		t.Fatal(err)
	}
	tcp := addr.(*net.TCPAddr)
	if !tcp.IP.IsLoopback() {
		t.Fatalf("listening on %v, want loopback", addr)
	}
	url := "http://" + addr.String() + Prefix + "counters"
	for _, c := range []struct {
		host string
		want int
	}{
		{"", http.StatusOK},
		{"localhost", http.StatusOK},
		{"[::1]:80", http.StatusOK},
		{"evil.example", http.StatusForbidden},
		{"evil.example:" + strings.Split(addr.String(), ":")[1], http.StatusForbidden},
	} {
		h := map[string]string{}
		if c.host != "" {
			h["Host"] = c.host
		}
		code, body := fetch(t, url, h)
		if code != c.want {
			t.Errorf("Host %q: %d %s, want %d", c.host, code, body, c.want)
		}
		if code == http.StatusOK {
			var cs Counters
			// "off", or "file" when the tests run with the calltrail
			// tag: this test binary is then traced, to a file.
			if err := json.Unmarshal([]byte(body), &cs); err != nil || cs.Mode != "off" && cs.Mode != "file" {
				t.Errorf("counters of a program not in flight mode: %s (%v)", body, err)
			}
		}
	}
}

// TestListenBeyondLoopback checks that another host than loopback needs
// a token.
func TestListenBeyondLoopback(t *testing.T) {
	if _, err := Listen("0.0.0.0:0", ""); err == nil || !strings.Contains(err.Error(), "CALLTRAIL_HTTP_TOKEN") {
		t.Errorf("listening beyond loopback without a token: %v", err)
	}
	addr, err := Listen("0.0.0.0:0", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(addr.(*net.TCPAddr).Port)) + Prefix + "counters"
	if code, _ := fetch(t, url, nil); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", code)
	}
	if code, body := fetch(t, url, map[string]string{"Authorization": "Bearer s3cret"}); code != http.StatusOK {
		t.Errorf("with the token: %d %s", code, body)
	}
}

// TestListenEnv: CALLTRAIL_HTTP naming another host than loopback,
// without a token, is served on loopback, and says so.
func TestListenEnv(t *testing.T) {
	var stderr strings.Builder
	addr := listenEnv("0.0.0.0:0", "", &stderr)
	if addr == nil || !addr.(*net.TCPAddr).IP.IsLoopback() || !strings.Contains(stderr.String(), "serving "+addr.String()+" only") {
		t.Fatalf("served %v, saying %q", addr, stderr.String())
	}
	if code, body := fetch(t, "http://"+addr.String()+Prefix+"counters", nil); code != http.StatusOK {
		t.Errorf("counters on loopback: %d %s", code, body)
	}
}

// TestToken checks the token on the program's own mux.
func TestToken(t *testing.T) {
	srv := httptest.NewServer(Handler("s3cret"))
	defer srv.Close()
	url := srv.URL + Prefix + "counters"
	for _, c := range []struct {
		auth string
		want int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"s3cret", http.StatusUnauthorized},
		{"Bearer s3cret", http.StatusOK},
	} {
		h := map[string]string{}
		if c.auth != "" {
			h["Authorization"] = c.auth
		}
		if code, body := fetch(t, url, h); code != c.want {
			t.Errorf("Authorization %q: %d %s, want %d", c.auth, code, body, c.want)
		}
	}
}

// TestSnapshotUntraced checks that a program without a flight recorder
// says why it has no snapshot, with a status rather than an empty trace.
func TestSnapshotUntraced(t *testing.T) {
	srv := httptest.NewServer(Handler(""))
	defer srv.Close()
	code, body := fetch(t, srv.URL+Prefix+"snapshot", nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "CALLTRAIL_MODE=flight") {
		t.Errorf("snapshot of an untraced program: %d %s", code, body)
	}
	for _, secs := range []string{"0", "NaN", "-1", "601", "Inf"} {
		if code, body := send(t, http.MethodPost, srv.URL+Prefix+"capture?seconds="+secs, nil); code != http.StatusBadRequest || !strings.Contains(body, "more than 0 and at most 600") {
			t.Errorf("capture of %s seconds: %d %q, want 400 saying what it takes", secs, code, body)
		}
	}
}

// TestCrossSite: what a web page of another origin makes a browser send
// is refused, a change of state by GET too (an <img> can send it), and
// a command-line client's requests are served.
func TestCrossSite(t *testing.T) {
	srv := httptest.NewServer(Handler(""))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, c := range []struct {
		method, path string
		header       map[string]string
		want         int
	}{
		{"POST", "off", map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"POST", "on", map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"POST", "off", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"GET", "counters", map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{"GET", "capture?seconds=600&profiles=cpu", nil, http.StatusMethodNotAllowed},
		{"GET", "off", nil, http.StatusMethodNotAllowed},
		{"POST", "off", map[string]string{"Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}, http.StatusOK},
		{"POST", "off", nil, http.StatusOK},
		{"GET", "counters", nil, http.StatusOK},
	} {
		if code, body := send(t, c.method, srv.URL+Prefix+c.path, c.header); code != c.want {
			t.Errorf("%s %s with %v: %d %s, want %d", c.method, c.path, c.header, code, body, c.want)
		}
	}
}

// TestRegisterHost: the handlers on a program's own mux refuse a Host
// header that does not name loopback, as CALLTRAIL_HTTP's listener does,
// unless a token guards them; a token with spaces around it, as an
// environment variable can carry, matches the header's.
func TestRegisterHost(t *testing.T) {
	mux := http.NewServeMux()
	t.Setenv("CALLTRAIL_HTTP_TOKEN", "")
	Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	if code, _ := fetch(t, srv.URL+Prefix+"counters", map[string]string{"Host": "evil.com"}); code != http.StatusForbidden {
		t.Errorf("Host evil.com: %d, want 403", code)
	}
	if code, _ := send(t, http.MethodPost, srv.URL+Prefix+"off", map[string]string{"Host": "evil.com"}); code != http.StatusForbidden {
		t.Errorf("POST off, Host evil.com: %d, want 403", code)
	}
	guarded := httptest.NewServer(Handler(" s3cret \n"))
	defer guarded.Close()
	if code, body := fetch(t, guarded.URL+Prefix+"counters", map[string]string{"Host": "svc.example", "Authorization": "Bearer s3cret"}); code != http.StatusOK {
		t.Errorf("with the token, Host svc.example: %d %s", code, body)
	}
}

// TestInFlight: past MaxInFlight snapshots being served, another is
// refused at once, rather than held with its window's memory; once one
// is done, the next is served.
func TestInFlight(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, MaxInFlight)
	serving := func(tw *traceWriter) (calltrail.Window, error) {
		started <- struct{}{}
		<-release
		_, err := tw.Write([]byte("trace"))
		return calltrail.Window{}, err
	}
	done := make(chan int, MaxInFlight)
	for range MaxInFlight {
		go func() {
			rec := httptest.NewRecorder()
			write(rec, serving)
			done <- rec.Code
		}()
	}
	for range MaxInFlight {
		<-started
	}
	rec := httptest.NewRecorder()
	write(rec, func(*traceWriter) (calltrail.Window, error) {
		t.Error("served past the bound")
		return calltrail.Window{}, nil
	})
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "being served already") {
		t.Errorf("past the bound: %d %q", rec.Code, rec.Body.String())
	}
	close(release)
	for range MaxInFlight {
		if code := <-done; code != http.StatusOK {
			t.Errorf("a snapshot within the bound: %d", code)
		}
	}
	rec = httptest.NewRecorder()
	write(rec, func(tw *traceWriter) (calltrail.Window, error) {
		_, err := tw.Write([]byte("x"))
		return calltrail.Window{}, err
	})
	if rec.Code != http.StatusOK {
		t.Errorf("after the others: %d", rec.Code)
	}
}
