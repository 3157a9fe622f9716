package main

import (
	"fmt"
	"runtime"
)

func me() string { pc, _, _, _ := runtime.Caller(1); return runtime.FuncForPC(pc).Name() }

var pkgLit = func() string { return me() }

type T struct{}
type G[X any] struct{ x X }

func (T) V() string     { return me() }
func (*T) P() string    { return me() }
func (*G[X]) M() string { return me() }
func Map[X any](x X) []string {
	f := func() string { return me() }
	return []string{me(), f()}
}

func init() { fmt.Println(me(), func() string { return me() }()) }

func main() {
	a := func() []string {
		b := func() string { return me() }
		c := func() []string {
			d := func() string { return me() }
			return []string{me(), d()}
		}
		return append([]string{me(), b()}, c()...)
	}
	e := func() string { return me() }
	fmt.Println(me(), a(), e(), pkgLit(), T{}.V(), new(T).P(), new(G[int]).M(), Map(1))
}
