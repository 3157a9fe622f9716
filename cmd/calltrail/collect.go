package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/calltrail/calltrail/live"
	"github.com/calltrail/calltrail/store"
)

func collectVerb() *verb {
	var (
		to, service string
		labels      labelList
		every       time.Duration
		count       int
	)
	return &verb{
		name:    "collect",
		args:    "--to clickhouse://HOST:PORT/DB [--every D] [--service NAME] [--label KEY=VALUE]... [--count N] ADDR...",
		summary: "capture the calls of running programs window after window, and push each window to a store",
		more: "Each ADDR is a program's control endpoint (CALLTRAIL_HTTP, or live.Register). collect captures\n" +
			"its calls of the next --every, again and again, window after window, and pushes each window\n" +
			"while the next is captured, labelled endpoint=ADDR. An endpoint that does not answer is tried\n" +
			"again at the next window. CALLTRAIL_HTTP_TOKEN is sent as the token.",
		live: true,
		flags: func(fs *flag.FlagSet) {
			to, service, labels, every, count = "", "", nil, 10*time.Second, 0
			fs.StringVar(&to, "to", "", "the store: `clickhouse://HOST:PORT/DB`, with ?cluster=NAME over a cluster's shards")
			fs.StringVar(&service, "service", "", "the service the programs are (default: each trace's program)")
			fs.Var(&labels, "label", "a label of every window, `KEY=VALUE` (repeat for more)")
			fs.DurationVar(&every, "every", 10*time.Second, "capture windows of `D`")
			fs.IntVar(&count, "count", 0, "stop after `N` windows of each endpoint (0: until interrupted)")
		},
		run: func(sess *session, _ *flag.FlagSet, args []string) (err error) {
			if to == "" {
				return usageError{"name the store: --to clickhouse://HOST:PORT/DB"}
			}
			if len(args) == 0 {
				return usageError{"name the endpoints to collect from"}
			}
			if every < time.Second || every > live.MaxCapture*time.Second {
				return usageError{fmt.Sprintf("--every %s: want from 1s to %s, the longest capture a program gives", every, live.MaxCapture*time.Second)}
			}
			// An interrupt ends the captures and pushes under way: a push
			// cut short deletes what it wrote.
			ctx, done := interruptible()
			defer func() { err = done(err) }()
			s, err := openForPush(ctx, to)
			if err != nil {
				return err
			}
			defer s.Close()
			dir, err := os.MkdirTemp("", "calltrail-collect")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			c := &collector{s: s, log: sess.errOut, dir: dir, every: every, count: count, service: service, labels: labels}
			var wg sync.WaitGroup
			for i, addr := range args {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c.endpoint(ctx, i, addr)
				}()
			}
			wg.Wait()
			if c.pushed == 0 {
				return fmt.Errorf("no window pushed")
			}
			return nil
		},
	}
}

// collector captures windows of endpoints and pushes them.
type collector struct {
	s       *store.Store
	log     io.Writer // where it tells of each push
	dir     string
	every   time.Duration
	count   int
	service string
	labels  []string

	mu     sync.Mutex
	pushed int // windows pushed
}

// endpoint captures window after window of addr, and pushes each while
// the next is captured: the windows follow each other but for the time
// a request takes.
func (c *collector) endpoint(ctx context.Context, n int, addr string) {
	windows := make(chan string, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for path := range windows {
			c.push(ctx, addr, path)
		}
	}()
	defer func() { close(windows); wg.Wait() }()
	q := url.Values{"seconds": {strconv.FormatFloat(c.every.Seconds(), 'f', -1, 64)}}
	for i := 0; c.count == 0 || i < c.count; i++ {
		if ctx.Err() != nil {
			return
		}
		data, err := fetchEndpoint(ctx, addr, "capture", q, c.every+time.Minute)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			fmt.Fprintf(c.log, "calltrail collect: %v\n", err)
			select {
			case <-time.After(c.every):
			case <-ctx.Done():
			}
			continue
		}
		path := filepath.Join(c.dir, fmt.Sprintf("e%d-w%d.trace", n, i))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			fmt.Fprintf(c.log, "calltrail collect: %v\n", err)
			continue
		}
		windows <- path
	}
}

func (c *collector) push(ctx context.Context, addr, path string) {
	defer os.Remove(path)
	labels := append([]string{"endpoint=" + addr}, c.labels...)
	p, err := c.s.Push(ctx, path, store.Meta{Service: c.service, Labels: labels}, nil)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		fmt.Fprintf(c.log, "calltrail collect: %s: %v\n", addr, err)
		return
	}
	if p.Warning != "" {
		fmt.Fprintf(c.log, "calltrail collect: warning: %s: %s\n", addr, p.Warning)
	}
	c.mu.Lock()
	c.pushed++
	c.mu.Unlock()
	fmt.Fprintf(c.log, "calltrail collect: %s: pushed %d calls (trace %s)\n", addr, p.Calls, p.Trace)
}
