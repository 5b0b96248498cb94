package gobuild

// This file builds the binaries; doc.go says why with the race setting.

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Race reports whether this binary was built with -race.
const Race = raceEnabled

// Args returns the go build arguments that build pkg into out with this
// binary's race setting.
func Args(out, pkg string) []string {
	args := []string{"build"}
	if Race {
		args = append(args, "-race")
	}
	return append(args, "-o", out, pkg)
}

// Build builds pkg (an import path of this module) into out. It runs
// from this module's source directory so the module is found whatever
// the caller's working directory.
func Build(out, pkg string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("the go command is not on PATH (go test puts it there; otherwise add $(go env GOROOT)/bin to PATH): %w", err)
	}
	cmd := exec.Command(goBin, Args(out, pkg)...)
	if dir := sourceDir(); dir != "" {
		cmd.Dir = dir
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(cmd.Args[1:], " "), err, b)
	}
	return nil
}

// BuildIn builds pkg into dir/name and returns the binary's path.
func BuildIn(dir, pkg, name string) (string, error) {
	path := filepath.Join(dir, name)
	return path, Build(path, pkg)
}

// sourceDir is this package's directory when the binary was built from
// the source tree (inside the module); "" under -trimpath, where the
// working directory (inside the module) is used.
func sourceDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	return filepath.Dir(file)
}
