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
	req, err := http.NewRequest(http.MethodGet, url, nil)
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
	if code, _ := fetch(t, srv.URL+Prefix+"capture?seconds=0", nil); code != http.StatusBadRequest {
		t.Errorf("capture of 0 seconds: %d, want 400", code)
	}
}
