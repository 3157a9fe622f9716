// Command fib computes Fibonacci numbers by naive recursion: nothing but
// function calls, the worst case for a tracer. It prints how long the
// computation took, so that the cost of tracing per call can be measured:
//
//	go run ./examples/fib 32
//	go run ./cmd/calltrail run ./examples/fib 32
//
// (traced time - plain time) / calls recorded is the cost of a traced call.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func main() {
	n := 30
	if len(os.Args) > 1 {
		if v, err := strconv.Atoi(os.Args[1]); err == nil {
			n = v
		}
	}
	start := time.Now()
	r := fib(n)
	fmt.Printf("fib(%d) = %d in %v\n", n, r, time.Since(start))
}
