// Command callchains is the program of the call-chain question: three
// chains of calls, A1->B1->C1->D, A2->B2->C2->D and A3->B3->C3->D, all
// reaching D, run from several goroutines. Which chain did a given call
// of D belong to? calltrail answers.
//
// It is traced with calltrail's manual API, defer calltrail.Trace()(), and
// records only when built with the calltrail tag:
//
//	go run -tags calltrail ./examples/callchains
//	go run ./cmd/calltrail replay calltrail.out
package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/calltrail/calltrail"
)

func A1() {
	defer calltrail.Trace()()
	B1()
}

func B1() {
	defer calltrail.Trace()()
	C1()
}

func C1() {
	defer calltrail.Trace()()
	D(1)
}

func A2() {
	defer calltrail.Trace()()
	B2()
}

func B2() {
	defer calltrail.Trace()()
	C2()
}

func C2() {
	defer calltrail.Trace()()
	D(2)
}

func A3() {
	defer calltrail.Trace()()
	B3()
}

func B3() {
	defer calltrail.Trace()()
	C3()
}

func C3() {
	defer calltrail.Trace()()
	D(3)
}

// D is reached by every chain, and takes longer the higher the chain.
func D(chain int) {
	defer calltrail.Trace()()
	time.Sleep(time.Duration(chain) * time.Millisecond)
}

func main() {
	defer calltrail.Trace()()
	var wg sync.WaitGroup
	for _, chain := range []func(){A2, A3} {
		wg.Add(1)
		go func() {
			defer calltrail.Trace()()
			defer wg.Done()
			chain()
		}()
	}
	A1()
	wg.Wait()
	fmt.Println("callchains: done")
}
