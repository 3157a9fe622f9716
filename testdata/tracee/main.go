// Command tracee is traced by the runtime's end-to-end tests. Its first
// argument picks what it does; it prints "ready" once it is inside its
// traced calls, for tests that signal it.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/calltrail/calltrail"
)

func work(n int) int {
	defer calltrail.Trace()()
	if n <= 1 {
		return 1
	}
	return work(n-1) + work(n-2)
}

func boom() {
	defer calltrail.Trace()()
	panic("boom")
}

func wait() {
	defer calltrail.Trace()()
	fmt.Println("ready")
	time.Sleep(time.Minute)
}

func spin() {
	defer calltrail.Trace()()
	fmt.Println("ready")
	for {
		work(10)
	}
}

func handled() {
	defer calltrail.Trace()()
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT)
	fmt.Println("ready")
	<-ch
	fmt.Println("handled", "interrupt")
}

func main() {
	defer calltrail.Trace()()
	work(5)
	switch mode := os.Args[1]; mode {
	case "return":
	case "panic":
		boom()
	case "gopanic":
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer calltrail.Trace()()
			boom()
		}()
		wg.Wait()
	case "wait":
		wait()
	case "spin":
		spin()
	case "handle":
		handled()
	case "exit":
		// Go gives no way to notice os.Exit: what the writer wrote by
		// then, every 100ms, is what the trace holds.
		time.Sleep(300 * time.Millisecond)
		os.Exit(3)
	case "stopexit":
		calltrail.Stop()
		os.Exit(3)
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		os.Exit(2)
	}
}
