package gtable

import "math/bits"

const (
	pageBits = 6
	pageSize = 1 << pageBits
	// minFill is how many values a page holds on average, at least: a
	// page is made only while the pages hold that many.
	minFill = pageSize / 2
	// freePages are pages made before minFill applies.
	freePages = 64
)

type page[T any] struct {
	present uint64 // bit i: vals[i] is set
	vals    [pageSize]T
}

// A Table maps goroutine ids to values of T. Its zero value is empty and
// ready to use. Pointers it returns stay valid until the value is
// deleted.
type Table[T any] struct {
	pages    map[uint64]*page[T]
	sparse   map[uint64]*T
	n        int
	lastKey  uint64
	lastPage *page[T]
}

// Len reports how many ids hold a value.
func (t *Table[T]) Len() int { return t.n }

func (t *Table[T]) page(key uint64) *page[T] {
	if t.lastPage != nil && t.lastKey == key {
		return t.lastPage
	}
	p := t.pages[key]
	if p != nil {
		t.lastKey, t.lastPage = key, p
	}
	return p
}

// Get returns the value of id, or nil if it has none.
func (t *Table[T]) Get(id uint64) *T {
	if p := t.page(id >> pageBits); p != nil {
		if i := id & (pageSize - 1); p.present&(1<<i) != 0 {
			return &p.vals[i]
		}
	}
	// Kept apart before its page was made, or absent.
	return t.sparse[id]
}

// Put returns the value of id, adding a zero value if it has none, and
// whether it added one.
func (t *Table[T]) Put(id uint64) (v *T, added bool) {
	key, i := id>>pageBits, id&(pageSize-1)
	p := t.page(key)
	if p == nil || p.present&(1<<i) == 0 {
		if v := t.sparse[id]; v != nil {
			return v, false
		}
	}
	if p == nil {
		if len(t.pages) >= freePages && (len(t.pages)+1)*minFill > t.n+1 {
			// A page here would hold too few values: keep this one apart.
			if t.sparse == nil {
				t.sparse = map[uint64]*T{}
			}
			v := new(T)
			t.sparse[id] = v
			t.n++
			return v, true
		}
		if t.pages == nil {
			t.pages = map[uint64]*page[T]{}
		}
		p = new(page[T])
		t.pages[key] = p
		t.lastKey, t.lastPage = key, p
	}
	if p.present&(1<<i) != 0 {
		return &p.vals[i], false
	}
	p.present |= 1 << i
	t.n++
	return &p.vals[i], true
}

// Delete removes the value of id, if it has one.
func (t *Table[T]) Delete(id uint64) {
	if p := t.page(id >> pageBits); p != nil {
		i := id & (pageSize - 1)
		if p.present&(1<<i) != 0 {
			p.present &^= 1 << i
			var zero T
			p.vals[i] = zero
			t.n--
			return
		}
	}
	if _, ok := t.sparse[id]; ok {
		delete(t.sparse, id)
		t.n--
	}
}

// Range calls f for each id and its value, in no particular order, until
// f returns false.
func (t *Table[T]) Range(f func(id uint64, v *T) bool) {
	for key, p := range t.pages {
		for b := p.present; b != 0; b &= b - 1 {
			i := uint64(bits.TrailingZeros64(b))
			if !f(key<<pageBits|i, &p.vals[i]) {
				return
			}
		}
	}
	for id, v := range t.sparse {
		if !f(id, v) {
			return
		}
	}
}
