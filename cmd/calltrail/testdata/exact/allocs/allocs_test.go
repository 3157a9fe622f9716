package allocs

import "testing"

var sink float64

func TestNormAllocs(t *testing.T) {
	a, b := vec{1, 2, 3}, vec{4, 5, 6}
	if n := testing.AllocsPerRun(100, func() { sink = Norm(a, b) }); n != 0 {
		t.Fatalf("Norm allocates %v times a call", n)
	}
}

func TestSum(t *testing.T) {
	as := []vec{{1, 0, 0}, {0, 1, 0}}
	if s := Sum(as, as); s != 8 {
		t.Fatalf("Sum = %v, want 8", s)
	}
}
