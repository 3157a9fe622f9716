// Command failing is the program of the question "which chain made D
// fail?": D reads a setting from a file, and is reached by three chains.
// Through loadDefaults it always succeeds; through loadOverrides it fails
// for a file that is not there; through serve, one request in ten names
// a file whose setting does not parse. calltrail records the error each
// call returns:
//
//	go run ./cmd/calltrail run ./examples/failing
//	go run ./cmd/calltrail chains --errors main.D
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// D reads the setting in file name, an integer.
func D(name string) (int, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("setting %s: %w", filepath.Base(name), err)
	}
	return n, nil
}

func loadDefaults(dir string) int {
	total := 0
	for _, name := range []string{"workers", "queue"} {
		n, err := D(filepath.Join(dir, name))
		if err != nil {
			log.Fatal(err)
		}
		total += n
	}
	return total
}

// loadOverrides reads the optional settings: a missing one is skipped.
func loadOverrides(dir string) int {
	total := 0
	for _, name := range []string{"workers.local", "queue.local"} {
		n, err := D(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		total += n
	}
	return total
}

func serve(dir string, requests int) (failed int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := handle(dir, i); err != nil {
				mu.Lock()
				failed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failed
}

func handle(dir string, i int) error {
	name := "queue"
	if i%10 == 9 {
		name = "limit" // holds "ten"
	}
	_, err := D(filepath.Join(dir, name))
	return err
}

func main() {
	dir, err := os.MkdirTemp("", "failing")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for name, v := range map[string]string{"workers": "4", "queue": "64", "limit": "ten"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v+"\n"), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("settings:", loadDefaults(dir)+loadOverrides(dir))
	fmt.Println("failed requests:", serve(dir, 100))
}
