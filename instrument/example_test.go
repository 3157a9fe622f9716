package instrument_test

import (
	"fmt"

	"github.com/calltrail/calltrail/instrument"
)

// File adds a guard at the top of each function, on the line of its
// opening brace, so that the file's line numbers stay as they were.
func ExampleFile() {
	src := []byte(`package main

func main() {
	greet("gopher")
}

func greet(name string) {
	println("hello,", name)
}
`)
	res, err := instrument.File("main.go", src, instrument.Options{})
	if err != nil {
		panic(err)
	}
	for _, f := range res.Funcs {
		fmt.Printf("%s at line %d\n", f.Name, f.Line)
	}
	fmt.Printf("%s", res.Src)
	// Output:
	// main.main at line 3
	// main.greet at line 7
	// package main; import __ct "github.com/calltrail/calltrail"
	//
	// func main() { if __ct.Enabled { if c := __ct.Enter(&__ctf_ab6e4680[0]); c != 0 { defer __ct.Exit(c) } };
	// 	greet("gopher")
	// }
	//
	// func greet(name string) { if __ct.Enabled { if c := __ct.Enter(&__ctf_ab6e4680[1]); c != 0 { defer __ct.Exit(c) } };
	// 	println("hello,", name)
	// }
	//
	// var __ctf_ab6e4680 = [...]__ct.Func{{Name: "main.main", File: "main.go", Line: 3}, {Name: "main.greet", File: "main.go", Line: 7}}
}
