package chtest

import (
	"errors"
	"net"
	"os"
	"testing"
)

// TestPortTaken starts a server on a port another program holds, the
// native protocol's and then the HTTP interface's: start says the port
// was taken, which StartShards tries again on others, rather than take
// the other program for the server.
func TestPortTaken(t *testing.T) {
	bin, err := Binary()
	if err != nil {
		if os.Getenv("CALLTRAIL_CLICKHOUSE") == "required" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	for _, which := range []string{"native", "http"} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held := l.Addr().(*net.TCPAddr).Port
		free, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		s := &Server{Dir: t.TempDir(), TCPPort: held, HTTPPort: free}
		if which == "http" {
			s.TCPPort, s.HTTPPort = free, held
		}
		err = s.start(bin, "")
		l.Close()
		if err == nil {
			Stop([]*Server{s})
		}
		if !errors.Is(err, errPortTaken) {
			t.Errorf("%s port held by another program: start returned %v", which, err)
		}
	}
}
