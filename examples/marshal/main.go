// Command marshal encodes responses of thousands of items from many
// goroutines, as an RPC server would (seed 002: "a lock nobody expected").
// In slow mode every item goes through a type-info cache behind one global
// mutex, held while the type's information is worked out; in fixed mode
// the information is worked out once, and read without a lock.
//
//	go run ./cmd/calltrail run ./examples/marshal -mode slow
package main

import (
	"flag"
	"fmt"
	"strings"
	"sync"
	"time"
)

type item struct {
	ID    int
	Name  string
	Stamp time.Time
}

// typeInfo describes how to encode a type.
type typeInfo struct{ fields []string }

var (
	mu    sync.Mutex
	cache = map[string]*typeInfo{}
)

// getInfo returns the encoding information of a type, slowly: under the
// global lock, and recomputed for types with a time field, as the seed's
// library did for its stdtime option.
func getInfo(name string) *typeInfo {
	mu.Lock()
	defer mu.Unlock()
	if ti, ok := cache[name]; ok && !strings.Contains(name, "time") {
		return ti
	}
	ti := &typeInfo{fields: computeFields(name)}
	cache[name] = ti
	return ti
}

func computeFields(name string) []string {
	var fs []string
	for i := 0; i < 200; i++ {
		fs = append(fs, fmt.Sprintf("%s.f%d", name, i%3))
	}
	return fs[:3]
}

var fixedInfo = &typeInfo{fields: computeFields("item+time")}

func encodeItem(b *strings.Builder, it item, ti *typeInfo) {
	fmt.Fprintf(b, "%s=%d,%s=%s,%s=%d;", ti.fields[0], it.ID, ti.fields[1], it.Name, ti.fields[2], it.Stamp.Unix())
}

func encodeResponse(items []item, slow bool) int {
	var b strings.Builder
	for _, it := range items {
		ti := fixedInfo
		if slow {
			ti = getInfo("item+time")
		}
		encodeItem(&b, it, ti)
	}
	return b.Len()
}

func main() {
	mode := flag.String("mode", "slow", "slow or fixed")
	flag.Parse()
	items := make([]item, 1000)
	for i := range items {
		items[i] = item{ID: i, Name: fmt.Sprintf("n%d", i), Stamp: time.Unix(int64(i), 0)}
	}
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 10; r++ {
				encodeResponse(items, *mode == "slow")
			}
		}()
	}
	wg.Wait()
	fmt.Printf("took %d ms for %d responses\n", time.Since(start).Milliseconds(), 8*10)
}
