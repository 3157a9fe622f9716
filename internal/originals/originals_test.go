package originals

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStore: an original is kept by the file's real path, so that a link
// to the file finds it; removed, it is gone; a store it cannot write in
// says so.
func TestStore(t *testing.T) {
	dir := t.TempDir()
	s := Store{Dir: filepath.Join(dir, "cache")}
	file := filepath.Join(dir, "main.go")
	if err := os.WriteFile(file, []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Load(file); ok {
		t.Fatal("an original before any was saved")
	}
	if err := s.Save(file, []byte("original")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.go")
	if err := os.Symlink(file, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if got, ok := s.Load(link); !ok || string(got) != "original" {
		t.Errorf("through a link: %q, %v", got, ok)
	}
	s.Remove(file)
	if _, ok := s.Load(file); ok {
		t.Error("still there after Remove")
	}
	blocked := Store{Dir: filepath.Join(file, "not-a-dir")} // under a regular file
	if err := blocked.Save(file, []byte("x")); err == nil {
		t.Error("saved under a regular file")
	}
}
