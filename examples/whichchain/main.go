// Command whichchain is the question calltrail answers, as a program: D
// is reached by three chains of calls, A1 -> B1 -> C1 -> D, A2 -> B2 ->
// C2 -> D and A3 -> B3 -> C3 -> D, each run from a goroutine of its own,
// and one of them makes D slow. Which chain, in which goroutine? Nothing
// here mentions calltrail, and every function is small enough for the
// compiler to inline: calltrail run traces them all.
//
//	go run ./cmd/calltrail run ./examples/whichchain
//	go run ./cmd/calltrail chains main.D
package main

import (
	"fmt"
	"sync"
)

func A1() int { return B1() }
func B1() int { return C1() }
func C1() int { return D(1_000) }

func A2() int { return B2() }
func B2() int { return C2() }
func C2() int { return D(1_000) }

func A3() int { return B3() }
func B3() int { return C3() }
func C3() int { return D(1_000_000) } // the chain that makes D slow

// D sums the squares below n.
func D(n int) int {
	s := 0
	for i := range n {
		s += i * i
	}
	return s
}

func main() {
	chains := []func() int{A1, A2, A3}
	sums := make([]int, len(chains))
	var wg sync.WaitGroup
	for i, chain := range chains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				sums[i] += chain()
			}
		}()
	}
	wg.Wait()
	fmt.Println(sums)
}
