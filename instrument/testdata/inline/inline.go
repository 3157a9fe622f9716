// Package inline has functions the compiler inlines and functions it
// does not, for TestInlined. The comments say which.
package inline

type point struct{ x, y int }

// newPoint is inlined into Sum.
func newPoint(x int) *point { return &point{x, x} }

// norm is inlined into Sum: a method.
func (p *point) norm() int { return p.x*p.x + p.y*p.y }

// Sum is inlinable but never called here: not inlined.
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
