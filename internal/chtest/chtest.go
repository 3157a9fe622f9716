package chtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/calltrail/calltrail/internal/childproc"
)

// Server is one running ClickHouse server.
type Server struct {
	Dir      string
	TCPPort  int // the native protocol's port
	HTTPPort int
	cmd      *exec.Cmd
	exited   chan error // receives once, when the server exits
}

// Addr is the server's native protocol address.
func (s *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.TCPPort) }

// Binary returns the path of clickhouse-server, or an error that says
// how to install it.
func Binary() (string, error) {
	for _, name := range []string{"clickhouse-server", "/usr/sbin/clickhouse-server", "/usr/bin/clickhouse-server"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("clickhouse-server is not installed (apt-get install -y clickhouse-server; scripts/test.sh does)")
}

// Cluster is the name of the cluster of shards StartShards defines on
// every server.
const Cluster = "calltrail_shards"

// StartShards starts n servers under dir, each knowing all n as the
// shards of Cluster. A port another program takes between its choice
// and the server's start makes it start them all again on others, up to
// three times: it happened once in the test script's race pass, which
// starts the store's servers and the command's side by side.
func StartShards(dir string, n int) ([]*Server, error) {
	var err error
	for try := range 3 {
		var servers []*Server
		servers, err = startShards(filepath.Join(dir, fmt.Sprintf("try%d", try)), n)
		if !errors.Is(err, errPortTaken) {
			return servers, err
		}
	}
	return nil, err
}

// errPortTaken is wrapped by start's error when a port was taken.
var errPortTaken = errors.New("a port it was given was taken")

func startShards(dir string, n int) ([]*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	servers := make([]*Server, n)
	for i := range servers {
		s := &Server{Dir: filepath.Join(dir, fmt.Sprintf("ch%d", i))}
		if s.TCPPort, err = freePort(); err != nil {
			return nil, err
		}
		if s.HTTPPort, err = freePort(); err != nil {
			return nil, err
		}
		servers[i] = s
	}
	var shards strings.Builder
	for _, s := range servers {
		fmt.Fprintf(&shards, "<shard><replica><host>127.0.0.1</host><port>%d</port></replica></shard>", s.TCPPort)
	}
	for i, s := range servers {
		if err := s.start(bin, shards.String()); err != nil {
			Stop(servers[:i])
			return nil, err
		}
	}
	return servers, nil
}

func (s *Server) start(bin, shards string) error {
	for _, d := range []string{"data", "tmp", "user_files", "log", "format_schemas"} {
		if err := os.MkdirAll(filepath.Join(s.Dir, d), 0o755); err != nil {
			return err
		}
	}
	config := fmt.Sprintf(`<?xml version="1.0"?>
<yandex>
	<logger><level>warning</level><log>%[1]s/log/server.log</log><errorlog>%[1]s/log/error.log</errorlog><console>0</console></logger>
	<http_port>%[2]d</http_port>
	<tcp_port>%[3]d</tcp_port>
	<listen_host>127.0.0.1</listen_host>
	<path>%[1]s/data/</path>
	<tmp_path>%[1]s/tmp/</tmp_path>
	<user_files_path>%[1]s/user_files/</user_files_path>
	<format_schema_path>%[1]s/format_schemas/</format_schema_path>
	<users_config>%[1]s/users.xml</users_config>
	<default_profile>default</default_profile>
	<default_database>default</default_database>
	<mark_cache_size>268435456</mark_cache_size>
	<uncompressed_cache_size>268435456</uncompressed_cache_size>
	<max_concurrent_queries>50</max_concurrent_queries>
	<remote_servers><%[4]s>%[5]s</%[4]s></remote_servers>
</yandex>
`, s.Dir, s.HTTPPort, s.TCPPort, Cluster, shards)
	users := `<?xml version="1.0"?>
<yandex>
	<profiles><default><max_memory_usage>2000000000</max_memory_usage></default></profiles>
	<users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
	<quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`
	if err := os.WriteFile(filepath.Join(s.Dir, "config.xml"), []byte(config), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "users.xml"), []byte(users), 0o644); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(s.Dir, "log", "stdout.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	s.cmd = exec.Command(bin, "--config-file="+filepath.Join(s.Dir, "config.xml"))
	childproc.DieWithParent(s.cmd)
	s.cmd.Dir = s.Dir
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.exited = make(chan error, 1)
	go func() { s.exited <- s.cmd.Wait(); close(s.exited) }()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		select {
		case err := <-s.exited:
			out, _ := os.ReadFile(filepath.Join(s.Dir, "log", "error.log"))
			if bytes.Contains(out, []byte("Address already in use")) {
				err = fmt.Errorf("%w: %v", errPortTaken, err)
			}
			return fmt.Errorf("clickhouse-server exited: %w\n%s", err, lastLines(out, 10))
		default:
		}
		// Its own answer, not only a port that takes connections: one
		// held by another program does too, until the server exits.
		if s.pings() {
			if c, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
				c.Close()
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.cmd.Process.Kill()
	return fmt.Errorf("clickhouse-server did not listen on %s within a minute", s.Addr())
}

// pings reports whether the server answers its HTTP interface's ping.
func (s *Server) pings() bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/ping", s.HTTPPort))
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	return resp.StatusCode == http.StatusOK && string(body) == "Ok.\n"
}

// Stop kills the servers and waits for them to exit. Their data goes
// with their directory, so a clean shutdown gains nothing, and SIGTERM
// took 10 s: the server waits for its idle HTTP connections to close,
// and the ping's, kept alive by its client, is one. Four of
// cmd/calltrail's tests waited that long, in each pass of the test
// script.
func Stop(servers []*Server) {
	for _, s := range servers {
		if s != nil && s.exited != nil {
			s.cmd.Process.Kill()
		}
	}
	for _, s := range servers {
		if s != nil && s.exited != nil {
			<-s.exited
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
