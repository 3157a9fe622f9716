package ring

import (
	"runtime"
	"sync"
	"testing"
)

// TestManyWriters has goroutines write numbered events through a small
// ring, waiting for room as the runtime does, while one reader takes them:
// every event arrives, and each goroutine's in order.
func TestManyWriters(t *testing.T) {
	const writers, each = 8, 5000
	r := New(64)
	var wg sync.WaitGroup
	for g := 1; g <= writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				pos, full := r.Claim(1)
				for full && !r.Free(pos, 1) {
					runtime.Gosched() // the runtime waits on a condition
				}
				Put(r.At(pos), uint64(g), int64(i))
			}
		}()
	}
	next := make([]int64, writers+1)
	got := 0
	for got < writers*each {
		tail, n := r.Readable()
		pos := tail
		for n > 0 {
			run := r.Run(pos, n)
			k := 0
			for k < len(run) && Load(&run[k]) != 0 {
				sl := run[k]
				if sl.Time != next[sl.Word] {
					t.Fatalf("writer %d: event %d after %d", sl.Word, sl.Time, next[sl.Word]-1)
				}
				next[sl.Word]++
				k++
			}
			pos += uint64(k)
			n -= uint64(k)
			if k < len(run) {
				break // not yet written
			}
		}
		got += int(pos - tail)
		r.Release(pos)
		runtime.Gosched()
	}
	wg.Wait()
	if r.Pending() {
		t.Error("slots pending after every event was read")
	}
}

// TestReserve fills a ring with Reserve, which refuses what it cannot
// hold together with the slots it promised.
func TestReserve(t *testing.T) {
	r := New(8)
	pos, ok := r.Reserve(1, 1) // an enter, and its exit promised
	if !ok || pos != 0 {
		t.Fatalf("Reserve on an empty ring: %d, %v", pos, ok)
	}
	Put(r.At(pos), 1, 0)
	if _, ok := r.Reserve(6, 1); ok {
		t.Fatal("Reserve gave 6 slots and a promise with 7 free, 1 of them promised")
	}
	if _, ok := r.Reserve(5, 1); !ok {
		t.Fatal("Reserve refused 5 slots and a promise with 7 free, 1 of them promised")
	}
	sl := r.ClaimOwed()
	if sl != r.At(6) {
		t.Errorf("the promised slot is not the one after those reserved")
	}
	tail, n := r.Readable()
	if tail != 0 || n != 7 {
		t.Errorf("Readable = %d, %d; want 0, 7", tail, n)
	}
	r.Release(7)
	if r.Pending() {
		t.Error("pending after release")
	}
	if *r.At(0) != (Slot{}) {
		t.Error("Release left a slot written")
	}
}
