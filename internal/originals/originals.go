package originals

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// A Store keeps originals under Dir; the zero Store under the user's
// cache directory, in calltrail/originals.
type Store struct {
	Dir string
}

// path is where the original of file is kept: a file of Dir named by the
// hash of file's absolute path, links resolved.
func (s Store) path(file string) (string, error) {
	dir := s.Dir
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(cache, "calltrail", "originals")
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])), nil
}

// Save keeps orig for file. Failing, it keeps nothing and says why:
// --undo then works from the file alone, which gives the original back
// as it was only while no formatter has moved the instrumentation.
func (s Store) Save(file string, orig []byte) error {
	p, err := s.path(file)
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(p), 0o700); err == nil {
			err = os.WriteFile(p, orig, 0o600)
		}
	}
	return err
}

// Load returns the original kept for file, and whether there is one.
func (s Store) Load(file string) ([]byte, bool) {
	p, err := s.path(file)
	if err != nil {
		return nil, false
	}
	data, err := os.ReadFile(p)
	return data, err == nil
}

// Path returns where the original of file is kept, for a user to find.
func (s Store) Path(file string) (string, error) { return s.path(file) }

// Remove forgets the original of file.
func (s Store) Remove(file string) {
	if p, err := s.path(file); err == nil {
		os.Remove(p)
	}
}
