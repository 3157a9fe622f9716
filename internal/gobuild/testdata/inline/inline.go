// Package inline has functions the compiler inlines and functions it
// does not, some of which allocate, for TestKeepInlined. The comments say
// which to keep inlined.
package inline

type point struct{ x, y int }

// newPoint is inlined into Sum, where its point stays on the stack: kept
// inlined.
func newPoint(x int) *point { return &point{x, x} }

// norm is inlined into Sum: a method that allocates nothing, traced.
func (p *point) norm() int { return p.x*p.x + p.y*p.y }

// Sum is inlinable but only called from the external test package; its
// inlined newPoint allocates nothing here: traced.
func Sum(x int) int { return newPoint(x).norm() + first([]int{x}) }

// first is generic, and inlined into Sum.
func first[T any](s []T) T { return s[0] }

// Apply is not inlinable: it loops and calls through a func value.
func Apply(n int, f func(int) int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += f(i)
	}
	return s
}

// Squares passes a closure to Apply: the closure can be inlined but is
// only called through a func value, so it is not inlined.
func Squares(n int) int {
	return Apply(n, func(i int) int { return i * i })
}

// Twice calls a closure directly: the closure is inlined.
func Twice(x int) int {
	double := func(v int) int { return 2 * v }
	return double(x)
}

// fib is recursive: never inlinable.
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

// Fib calls fib.
func Fib(n int) int { return fib(n) }

type digest struct{ s [4]uint64 }

// newDigest returns &d, which moves to the heap: kept inlined.
func newDigest(seed uint64) *digest {
	var d digest
	d.s[0] = seed
	return &d
}

// NewDigest has no allocation of its own, but the one of newDigest,
// inlined into it, moves to the heap within its body: kept inlined too,
// so that a caller keeping the digest local keeps it on its stack.
func NewDigest() *digest { return newDigest(0) }

// Checksum keeps the digest local.
func Checksum() uint64 { return NewDigest().s[0] }

type node struct{ next *node }

// chain allocates and is recursive: traced, at every level.
func chain(n int) *node {
	if n == 0 {
		return nil
	}
	return &node{chain(n - 1)}
}

// evens and odds allocate and call each other: traced.
func evens(n int) *node {
	if n == 0 {
		return &node{}
	}
	return odds(n - 1)
}

func odds(n int) *node {
	if n == 0 {
		return nil
	}
	return evens(n - 1)
}

// Chains calls them.
func Chains() bool { return chain(3) != nil && evens(4) != nil }

// ptr moves its parameter to the heap, which inlined into Deref stays on
// its stack: kept inlined.
func ptr(x int) *int { return &x }

// Deref calls it.
func Deref() int { return *ptr(3) }

// fail boxes only a constant, which allocates nothing: traced.
func fail() { panic("fail") }

// Fail calls it.
func Fail() { fail() }

var sink *digest

// leak lets d escape through sink, inlined into Leak or not, where the
// compiler reports it moved to the heap as well: inlining spares
// nothing, traced.
func leak() {
	var d digest
	sink = &d
}

// Leak calls it.
func Leak() { leak() }

// middleware returns a closure whose own body lets a value escape: that
// happens when the closure runs, whether middleware is inlined or not,
// so inlining middleware spares nothing: traced.
func middleware() func(int) *int {
	return func(x int) *int {
		sink = &digest{}
		return &x
	}
}

var handlers []func(int) *int

// Use keeps the closure, which escapes there too.
func Use() { handlers = append(handlers, middleware()) }
