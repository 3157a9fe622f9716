// Command oncpu is busy on CPU in two ways a CPU profile names otherwise
// than the source does, and in many tiny calls whose time is mostly the
// tracer's: sumSq, an instance of a generic function, the profile calls
// main.sumSq[go.shape.float64]; fib, 2*fib(n+1)-1 calls that do almost
// nothing each.
package main

import "fmt"

type number interface{ ~int | ~float64 }

func sumSq[T number](xs []T, rounds int) T {
	var s T
	for range rounds {
		for _, x := range xs {
			s += x * x / (x + 1)
		}
	}
	return s
}

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func main() {
	xs := make([]float64, 10000)
	for i := range xs {
		xs[i] = float64(i)
	}
	var t float64
	for range 40 {
		t += sumSq(xs, 400)
	}
	fmt.Println(t > 0, fib(30))
}
