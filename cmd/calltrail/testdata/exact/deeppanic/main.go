// Command deeppanic parses deeply nested input as recursive descent
// parsers do: input cut short makes the parse fail by a panic at the
// bottom, which unwinds every frame to the top, where it is recovered and
// returned as an error.
package main

import (
	"flag"
	"fmt"
	"strings"
)

type parseError struct {
	pos int
	msg string
}

func (e parseError) Error() string { return fmt.Sprintf("at %d: %s", e.pos, e.msg) }

type parser struct {
	in  string
	pos int
}

// value parses a number, or a list of values in brackets, and returns
// how deep its lists nest.
func (p *parser) value() int {
	if p.pos >= len(p.in) {
		panic(parseError{p.pos, "unexpected end of input"})
	}
	switch c := p.in[p.pos]; {
	case c == '[':
		p.pos++
		depth := 0
		for p.pos < len(p.in) && p.in[p.pos] != ']' {
			depth = max(depth, p.value())
			if p.pos < len(p.in) && p.in[p.pos] == ',' {
				p.pos++
			}
		}
		if p.pos >= len(p.in) {
			panic(parseError{p.pos, "unclosed list"})
		}
		p.pos++
		return depth + 1
	case c >= '0' && c <= '9':
		for p.pos < len(p.in) && p.in[p.pos] >= '0' && p.in[p.pos] <= '9' {
			p.pos++
		}
		return 0
	}
	panic(parseError{p.pos, fmt.Sprintf("unexpected %q", p.in[p.pos])})
}

// parse turns the parser's panic into an error.
func parse(in string) (depth int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = r.(parseError)
		}
	}()
	p := &parser{in: in}
	return p.value(), nil
}

func main() {
	depth := flag.Int("depth", 10_000, "nesting depth of the input")
	rounds := flag.Int("rounds", 5, "inputs to parse")
	flag.Parse()
	// Input cut short: the innermost list is never closed.
	in := strings.Repeat("[", *depth) + "1"
	for i := 0; i < *rounds; i++ {
		if _, err := parse(in); err != nil {
			fmt.Println(err)
		}
	}
}
