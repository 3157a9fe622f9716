package gobuild

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Package is what the go command says of a package, as far as
// instrumenting needs.
type Package struct {
	ImportPath   string
	Name         string
	DepOnly      bool // only a dependency of the packages asked for
	Dir          string
	Standard     bool
	GoFiles      []string
	CgoFiles     []string
	TestGoFiles  []string
	XTestGoFiles []string
	// IgnoredGoFiles are the package's files its build constraints
	// leave out of this build (other systems, other tags).
	IgnoredGoFiles []string
	Deps           []string // the packages it depends on, with -deps
	Match          []string // the patterns asked for that match it
	Module         *struct {
		Path    string
		Version string
		Main    bool
		Dir     string
	}
	Error *struct{ Err string }
}

// List runs "go list -json" in dir with the given build flags and returns
// the packages matching patterns, with their dependencies if deps is set.
func List(dir string, flags []string, deps bool, patterns ...string) ([]Package, error) {
	return list(dir, nil, flags, deps, patterns...)
}

// list is List with extra environment variables for the go command.
func list(dir string, env, flags []string, deps bool, patterns ...string) ([]Package, error) {
	args := []string{"list", "-e", "-json=ImportPath,Name,DepOnly,Dir,Standard,GoFiles,CgoFiles,TestGoFiles,XTestGoFiles,IgnoredGoFiles,Deps,Match,Module,Error"}
	if deps {
		args = append(args, "-deps")
	}
	args = append(args, flags...)
	args = append(args, "--")
	args = append(args, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p Package
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}
