// Package allocs has a helper that allocates nothing once the compiler
// inlines it, and a test that asserts so, as tests of small helpers do.
package allocs

type vec struct{ x, y, z float64 }

// add returns a pointer to a new vec. On its own the vec escapes to the
// heap; inlined into a caller that keeps it local, it stays on the stack.
func add(a, b vec) *vec { return &vec{a.x + b.x, a.y + b.y, a.z + b.z} }

// Norm is the squared length of a+b.
func Norm(a, b vec) float64 {
	v := add(a, b)
	return v.x*v.x + v.y*v.y + v.z*v.z
}

// Sum adds the norms of many pairs: a loop the compiler leaves alone.
func Sum(as, bs []vec) float64 {
	s := 0.0
	for i := range as {
		s += Norm(as[i], bs[i])
	}
	return s
}
