package inline

import "testing"

// helper is inlined into TestHelper.
func helper(x int) int { return x + 1 }

// TestHelper is inlinable, but the testing package calls it through a func
// value: not inlined.
func TestHelper(t *testing.T) {
	if helper(1) != 2 {
		t.Fatal("helper")
	}
}
