package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/calltrail/calltrail/web"
)

func serveVerb() *verb {
	var (
		addr string
		open bool
		sf   storeFlags
	)
	return &verb{
		name:    "serve",
		live:    true,
		args:    "[-http ADDR] [--open] [FILE [BASE] | --from STORE [--service NAME] [--label K=V] [--since T] [--until T]]",
		summary: "browse a trace in the web UI: overview, flame graph, functions, timeline, call tree, requests",
		flags: func(fs *flag.FlagSet) {
			addr, open = "localhost:0", false
			fs.StringVar(&addr, "http", "localhost:0", "listen on `ADDR` (host:port; a port of 0 picks a free one)")
			fs.BoolVar(&open, "open", false, "open the page in a web browser")
			sf.register(fs)
		},
		run: func(sess *session, _ *flag.FlagSet, args []string) error {
			var name, base string
			switch {
			case sf.from != "":
			case len(args) == 0:
				name = defaultTrace()
			case len(args) == 1:
				name = args[0]
			case len(args) == 2:
				name, base = args[0], args[1]
			default:
				return usageError{fmt.Sprintf("want a trace file and at most one base trace, got %d arguments", len(args))}
			}
			var t, bt *web.Trace
			var calls uint64
			if sf.from != "" {
				began := time.Now()
				qt, err := sess.analysed(nil, &sf, args, true)
				if err != nil {
					return err
				}
				t = web.FromQuery(qt, "read from a store: recursion is folded, and the timeline and call tree, which need the calls themselves, are empty")
				t.LoadTime = time.Since(began)
				name, calls = qt.Name, qt.Profile.Stats.Calls
			} else {
				var err error
				if t, bt, err = loadTraces(name, base); err != nil {
					return err
				}
				calls = uint64(t.Calls())
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			// Interrupted, the server stops and calltrail ends well:
			// that is how it is meant to be stopped, from the moment it
			// says where it listens.
			ctx, done := interruptible()
			srv := web.New(t, bt, log.New(sess.errOut, "calltrail serve: ", 0))
			srv.AnyHost = !web.Loopback(ln)
			if srv.AnyHost {
				fmt.Fprintf(sess.errOut, "calltrail serve: warning: listening on %s, beyond this machine: anyone who can reach it can read the trace\n", ln.Addr())
			}
			url := "http://" + ln.Addr().String() + "/"
			fmt.Fprintf(sess.out, "calltrail serve: %s (%s: %d calls, ready in %dms)\n", url, name, calls, t.LoadTime.Milliseconds())
			if t.Warning != "" {
				fmt.Fprintf(sess.errOut, "calltrail: warning: %s: %s\n", name, t.Warning)
			}
			if open {
				if err := openBrowser(url); err != nil {
					fmt.Fprintf(sess.errOut, "calltrail serve: cannot open a browser (%v); open %s\n", err, url)
				}
			}
			return done(web.Serve(ctx, ln, srv.Handler()))
		},
	}
}

// loadTraces loads the trace and the base trace, if named.
func loadTraces(name, base string) (t, bt *web.Trace, err error) {
	if os.Getenv("GOMEMLIMIT") == "" {
		// Building the timeline index leaves garbage as large as the
		// index: a soft limit has the collector take it back while
		// loading, rather than let the peak double. It is lifted after,
		// lest the collector keep running for a trace that needs more.
		// The index and the analysis keep up to about 8 times the
		// trace's size: leave room above that.
		limit := int64(768 << 20)
		if st, err := os.Stat(name); err == nil {
			limit = max(limit, 12*st.Size())
		}
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(limit))
	}
	if t, err = web.Load(name); err != nil {
		return nil, nil, err
	}
	if base != "" {
		if bt, err = web.LoadBase(base); err != nil {
			return nil, nil, err
		}
	}
	return t, bt, nil
}

// openBrowser asks the desktop to open url, without waiting for it.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
