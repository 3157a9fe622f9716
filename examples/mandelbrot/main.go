// Command mandelbrot renders the Mandelbrot set (seed 004). Mode px starts
// a goroutine per pixel, row one per row, workers a fixed pool, seq none.
//
//	go run ./cmd/calltrail run ./examples/mandelbrot -mode px
package main

import (
	"flag"
	"fmt"
	"runtime"
	"sync"
	"time"
)

const size = 256

var img [size][size]uint8

func pixel(x, y int) uint8 {
	c := complex(3*float64(x)/size-2.2, 3*float64(y)/size-1.5)
	z := complex(0, 0)
	for i := 0; i < 64; i++ {
		z = z*z + c
		if real(z)*real(z)+imag(z)*imag(z) > 4 {
			return uint8(i * 4)
		}
	}
	return 255
}

func row(y int) {
	for x := 0; x < size; x++ {
		img[y][x] = pixel(x, y)
	}
}

func render(mode string) {
	var wg sync.WaitGroup
	switch mode {
	case "seq":
		for y := 0; y < size; y++ {
			row(y)
		}
	case "px":
		for y := 0; y < size; y++ {
			for x := 0; x < size; x++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					img[y][x] = pixel(x, y)
				}()
			}
		}
	case "row":
		for y := 0; y < size; y++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				row(y)
			}()
		}
	case "workers":
		rows := make(chan int, size)
		for w := 0; w < runtime.GOMAXPROCS(0); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for y := range rows {
					row(y)
				}
			}()
		}
		for y := 0; y < size; y++ {
			rows <- y
		}
		close(rows)
	}
	wg.Wait()
}

func main() {
	mode := flag.String("mode", "px", "seq, px, row or workers")
	flag.Parse()
	start := time.Now()
	render(*mode)
	fmt.Printf("rendered %dx%d in %d ms (%s)\n", size, size, time.Since(start).Milliseconds(), *mode)
}
