// Command evenodd decides whether numbers are even by two functions that
// call each other, down to leaf: indirect recursion, started five times
// shallow and once deep.
package main

import "fmt"

func even(n int) bool {
	if n == 0 {
		return leaf()
	}
	return odd(n - 1)
}

func odd(n int) bool {
	if n == 0 {
		return !leaf()
	}
	return even(n - 1)
}

func leaf() bool { return true }

func main() {
	count := 0
	for _, n := range []int{0, 1, 2, 3, 4, 40} {
		var e bool
		if n%2 == 0 {
			e = even(n)
		} else {
			e = odd(n)
		}
		if e {
			count++
		}
	}
	fmt.Println(count, "even")
}
