// Command firehose keeps every core busy calling: -g goroutines each call
// step -n times, as fast as they can.
package main

import (
	"flag"
	"fmt"
	"sync"
	"sync/atomic"
)

var sink atomic.Int64

//go:noinline
func step(x int) int { return x*x + 1 }

func main() {
	g := flag.Int("g", 4, "goroutines")
	n := flag.Int("n", 5_000_000, "calls of step per goroutine")
	flag.Parse()
	var wg sync.WaitGroup
	for i := 0; i < *g; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := 0
			for j := 0; j < *n; j++ {
				s += step(j)
			}
			sink.Add(int64(s))
		}()
	}
	wg.Wait()
	fmt.Println(*g * *n)
}
