package ring

import (
	"runtime"
	"sync"
	"testing"
)

// TestWriters has goroutines write numbered events through a small ring,
// waiting for room as the runtime does, while one reader takes them:
// every event arrives, and each goroutine's in order. Take has one
// writer; TakeShared several.
func TestWriters(t *testing.T) {
	for _, tc := range []struct {
		name    string
		writers int
		take    func(r *Ring, n uint64) (uint64, bool)
	}{
		{"Take", 1, (*Ring).Take},
		{"TakeShared", 8, (*Ring).TakeShared},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const each = 5000
			rr := New(64)
			r := &rr
			var wg sync.WaitGroup
			for g := 1; g <= tc.writers; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						n := uint64(1 + i%3) // records of one to three slots
						pos, ok := tc.take(r, n)
						for !ok {
							runtime.Gosched() // the runtime waits on a condition
							pos, ok = tc.take(r, n)
						}
						for j := n - 1; j > 0; j-- {
							Put(r.At(pos+j), uint64(g), -1)
						}
						Put(r.At(pos), uint64(g), int64(i))
					}
				}()
			}
			next := make([]int64, tc.writers+1)
			got := 0
			for got < tc.writers*each {
				tail, n := r.Readable()
				pos := tail
				for n > 0 {
					run := r.Run(pos, n)
					k := 0
					for k < len(run) && Load(&run[k]) != 0 {
						sl := run[k]
						if sl.Time >= 0 {
							if sl.Time != next[sl.Word] {
								t.Fatalf("writer %d: event %d after %d", sl.Word, sl.Time, next[sl.Word]-1)
							}
							next[sl.Word]++
							got++
						}
						k++
					}
					pos += uint64(k)
					n -= uint64(k)
					if k < len(run) {
						break // not yet written
					}
				}
				r.Release(pos)
				runtime.Gosched()
			}
			wg.Wait()
			if r.Pending() {
				t.Error("slots pending after every event was read")
			}
		})
	}
}

// TestTake fills a ring with Take, which refuses what it cannot hold and
// takes what Room says it can.
func TestTake(t *testing.T) {
	rr := New(8)
	r := &rr
	for want := uint64(0); want < 8; want += 2 {
		if !r.Room(2) {
			t.Fatalf("no room for 2 slots after %d of 8", want)
		}
		pos, ok := r.Take(2)
		if !ok || pos != want {
			t.Fatalf("Take(2) = %d, %v; want %d", pos, ok, want)
		}
		Put(r.At(pos), 1, 0)
		Put(r.At(pos+1), 1, 0)
	}
	if r.Room(1) {
		t.Error("room in a full ring")
	}
	if _, ok := r.Take(1); ok {
		t.Fatal("Take gave a slot of a full ring")
	}
	r.Release(3)
	if !r.Room(3) || r.Room(4) {
		t.Errorf("after 3 slots released: room for 3 %v, for 4 %v", r.Room(3), r.Room(4))
	}
	if pos, ok := r.Take(3); !ok || pos != 8 || r.At(pos) != r.At(0) {
		t.Errorf("Take(3) after the release = %d, %v; want 8, the first slot again", pos, ok)
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
