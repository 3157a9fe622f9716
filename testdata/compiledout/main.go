// Command compiledout holds two functions that differ only by calltrail's
// guard. Built without the calltrail tag, they must compile to the same
// machine code; TestCompiledOut disassembles them to check.
package main

import "github.com/calltrail/calltrail"

var ctFuncs = [...]calltrail.Func{{Name: "main.guarded", File: "main.go", Line: 22}}

var sink []int

//go:noinline
func plain(xs []int, k int) int {
	s := 0
	for _, x := range xs {
		s += x * k
	}
	sink = append(sink, s)
	return s
}

//go:noinline
func guarded(xs []int, k int) int {
	if calltrail.Enabled {
		if c := calltrail.Enter(&ctFuncs[0]); c != 0 {
			defer calltrail.Exit(c)
		}
	}
	s := 0
	for _, x := range xs {
		s += x * k
	}
	sink = append(sink, s)
	return s
}

func main() {
	println(plain([]int{1, 2}, 3), guarded([]int{1, 2}, 3))
}
