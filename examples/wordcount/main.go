// Command wordcount counts the words of a file (seed 004: "pprof 101").
// In slow mode it reads one byte per read from the unbuffered file, a
// system call per byte; in fixed mode through bufio.
//
//	go run ./cmd/calltrail run ./examples/wordcount -mode slow
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
	"unicode"
)

func readbyte(r io.Reader) (rune, error) {
	var buf [1]byte
	_, err := r.Read(buf[:])
	return rune(buf[0]), err
}

func count(r io.Reader) int {
	words := 0
	inword := false
	for {
		c, err := readbyte(r)
		if err != nil {
			break
		}
		if unicode.IsSpace(c) && inword {
			words++
			inword = false
		}
		inword = unicode.IsLetter(c)
	}
	return words
}

// input writes a text of n bytes to a temporary file.
func input(n int) string {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("wordcount-%d.txt", os.Getpid()))
	f, err := os.Create(path)
	if err != nil {
		panic(err)
	}
	w := bufio.NewWriter(f)
	for n > 0 {
		k, _ := w.WriteString("calltrail traces every call ")
		n -= k
	}
	w.Flush()
	f.Close()
	return path
}

func main() {
	mode := flag.String("mode", "slow", "slow or fixed")
	size := flag.Int("bytes", 1<<20, "size of the text")
	flag.Parse()
	path := input(*size)
	defer os.Remove(path)
	f, err := os.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	var r io.Reader = f
	if *mode == "fixed" {
		r = bufio.NewReader(f)
	}
	start := time.Now()
	n := count(r)
	fmt.Printf("%d words in %d ms\n", n, time.Since(start).Milliseconds())
}
