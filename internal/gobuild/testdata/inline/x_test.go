package inline_test

import (
	"testing"

	"example.com/inline"
)

// TestSum calls inline.Sum, which is inlined into it from another package.
func TestSum(t *testing.T) {
	if inline.Sum(1) != 3 {
		t.Fatal("Sum")
	}
}
