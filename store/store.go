package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Config says where the store is.
type Config struct {
	Addr     string // host:port of ClickHouse's native protocol
	Database string
	User     string
	Password string
	// Cluster, if set, is a cluster of the servers' remote_servers: the
	// tables are Distributed over local tables on each of its shards.
	Cluster string
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseURL reads clickhouse://[USER[:PASSWORD]@]HOST[:PORT]/DB[?cluster=NAME].
// The port defaults to 9000, the native protocol's; the database to
// calltrail.
func ParseURL(s string) (Config, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "clickhouse" || u.Host == "" {
		return Config{}, fmt.Errorf("%q: want clickhouse://HOST:PORT/DB", Redact(s))
	}
	s = u.Redacted() // what the errors below show
	c := Config{Addr: u.Host, Database: strings.Trim(u.Path, "/"), User: "default"}
	if u.Port() == "" {
		c.Addr += ":9000"
	}
	if c.Database == "" {
		c.Database = "calltrail"
	}
	if u.User != nil {
		c.User = u.User.Username()
		c.Password, _ = u.User.Password()
	}
	q := u.Query()
	c.Cluster = q.Get("cluster")
	for k := range q {
		if k != "cluster" {
			return Config{}, fmt.Errorf("%q: unknown parameter %q (known: cluster)", s, k)
		}
	}
	if !identRE.MatchString(c.Database) || c.Cluster != "" && !identRE.MatchString(c.Cluster) {
		return Config{}, fmt.Errorf("%q: database and cluster names are letters, digits and _", s)
	}
	return c, nil
}

// Redact returns a store's URL as it may be shown: with its password, if
// any, replaced by xxxxx. Whatever does not parse as a URL shows only as
// far as its scheme, since a password may be in it.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if i := strings.Index(s, "://"); i >= 0 {
			return s[:i+3] + "…"
		}
		return "…"
	}
	return u.Redacted()
}

// Store is an open connection to the store.
type Store struct {
	conn driver.Conn
	cfg  Config
}

// Open connects to the store, without creating anything in it (see Init).
func Open(ctx context.Context, cfg Config) (*Store, error) {
	conn, err := dial(ctx, cfg.Addr, cfg)
	if err != nil {
		return nil, err
	}
	return &Store{conn: conn, cfg: cfg}, nil
}

func dial(ctx context.Context, addr string, cfg Config) (driver.Conn, error) {
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:        []string{addr},
		Auth:        clickhouse.Auth{Database: "default", Username: cfg.User, Password: cfg.Password},
		DialTimeout: 10 * time.Second,
		Settings: clickhouse.Settings{
			// A push commits only once its rows are on the shards.
			"insert_distributed_sync": 1,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("clickhouse %s: %v", addr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := conn.Ping(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("clickhouse %s: %v", addr, err)
	}
	return conn, nil
}

// Close closes the connection.
func (s *Store) Close() error { return s.conn.Close() }

// ErrNoSchema is returned by queries of a store that has no calltrail
// tables: nothing was pushed to it.
var ErrNoSchema = errors.New("no calltrail tables in this database: push a trace first")

// Init creates the database and the tables where they do not exist: on
// the server of the URL, or with a cluster on every shard of it, whose
// addresses it reads from system.clusters.
func (s *Store) Init(ctx context.Context) error {
	return s.everyServer(ctx, func(conn driver.Conn, suffix string) error {
		if s.cfg.Cluster == "" {
			return s.create(ctx, conn, "", "")
		}
		// On every server, the local tables and the Distributed ones
		// over them, so that any of them answers queries.
		if err := s.create(ctx, conn, "_local", ""); err != nil {
			return err
		}
		return s.create(ctx, conn, "", s.cfg.Cluster)
	})
}

// everyServer calls f with a connection to each server that holds the
// store's rows, and the suffix of its tables that hold them: the server
// of the URL and no suffix, or with a cluster each server of it (read
// from system.clusters) and "_local".
func (s *Store) everyServer(ctx context.Context, f func(conn driver.Conn, suffix string) error) error {
	if s.cfg.Cluster == "" {
		return f(s.conn, "")
	}
	rows, err := s.conn.Query(ctx, "SELECT host_address, port FROM system.clusters WHERE cluster = ? ORDER BY shard_num, replica_num", s.cfg.Cluster)
	if err != nil {
		return err
	}
	var addrs []string
	for rows.Next() {
		var host string
		var port uint16
		if err := rows.Scan(&host, &port); err != nil {
			rows.Close()
			return err
		}
		addrs = append(addrs, fmt.Sprintf("%s:%d", host, port))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(addrs) == 0 {
		return fmt.Errorf("no cluster %q in the server's remote_servers", s.cfg.Cluster)
	}
	for _, addr := range addrs {
		conn, err := dial(ctx, addr, s.cfg)
		if err != nil {
			return err
		}
		err = f(conn, "_local")
		conn.Close()
		if err != nil {
			return fmt.Errorf("%s: %v", addr, err)
		}
	}
	return nil
}

// create makes the tables named with suffix (see tables) on the server
// of conn, and adds the columns they lack.
func (s *Store) create(ctx context.Context, conn driver.Conn, suffix, cluster string) error {
	if err := conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+s.cfg.Database); err != nil {
		return err
	}
	for _, q := range tables(s.cfg.Database, suffix, cluster) {
		if err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%v\n%s", err, q)
		}
	}
	return s.upgrade(ctx, conn, suffix)
}

// upgrade adds to the tables named with suffix the columns that later
// versions of the schema added, so that a store made by an earlier
// calltrail takes new pushes; its earlier rows read them as their
// defaults, zero unless the schema says otherwise. The
// Debian server has no ADD COLUMN IF NOT EXISTS: the columns it has are
// read from system.columns.
func (s *Store) upgrade(ctx context.Context, conn driver.Conn, suffix string) error {
	rows, err := conn.Query(ctx, "SELECT table, name FROM system.columns WHERE database = ?", s.cfg.Database)
	if err != nil {
		return err
	}
	have := map[[2]string]bool{}
	for rows.Next() {
		var t, c string
		if err := rows.Scan(&t, &c); err != nil {
			rows.Close()
			return err
		}
		have[[2]string{t, c}] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range schema {
		for _, col := range columns(t.columns) {
			name, _, _ := strings.Cut(col, " ")
			if have[[2]string{t.name + suffix, name}] {
				continue
			}
			q := fmt.Sprintf("ALTER TABLE %s.%s%s ADD COLUMN %s", s.cfg.Database, t.name, suffix, col)
			if err := conn.Exec(ctx, q); err != nil {
				return fmt.Errorf("%v\n%s", err, q)
			}
		}
	}
	return nil
}
