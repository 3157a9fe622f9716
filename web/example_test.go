package web_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"

	"github.com/calltrail/calltrail/web"
)

// Serving a trace on a free port of this machine until interrupted, as
// calltrail serve does.
func Example() {
	t, err := web.Load("calltrail.out")
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s/ (%d calls)\n", ln.Addr(), t.Calls())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := web.Serve(ctx, ln, web.New(t, nil, log.Default()).Handler()); err != nil {
		log.Fatal(err)
	}
}
