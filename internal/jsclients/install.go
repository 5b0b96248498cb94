package jsclients

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// This file installs the pinned node modules once per lock file into a
// cache directory, as internal/pgtest caches the server binaries it
// fetches from npm.

//go:embed js/package.json js/package-lock.json js/read.js
var jsFiles embed.FS

// minNodeMajor is the oldest Node.js the harness accepts: Debian 12's
// nodejs (18), which .ci/run's apt-get install npm brings. cloudevents
// 9.0.0 is pinned for it (10.0.0 wants 20); the registry client 4.1.0
// declares node >=22 but needs nothing newer than 20 on the paths read.js
// takes (npm ci only warns about engines). The tests ran on Node 20.
const minNodeMajor = 18

// cacheDir is where installed module trees are kept, one per lock file
// hash: $JSCLIENTS_CACHE, else the user's cache directory.
func cacheDir() (string, error) {
	if d := os.Getenv("JSCLIENTS_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("jsclients: no cache directory (set JSCLIENTS_CACHE): %w", err)
	}
	return filepath.Join(d, "mooncdc-jsclients"), nil
}

// checkNode makes sure node and npm are installed and node is recent
// enough; the error says how to install them.
func checkNode(ctx context.Context) error {
	const fix = "install Node.js 18 or later with npm (Debian: apt-get install nodejs npm; .ci/run does it on a fresh machine)"
	for _, cmd := range []string{"node", "npm"} {
		if _, err := exec.LookPath(cmd); err != nil {
			return fmt.Errorf("jsclients: %s is not in PATH: %s", cmd, fix)
		}
	}
	out, err := exec.CommandContext(ctx, "node", "--version").Output()
	if err != nil {
		return fmt.Errorf("jsclients: node --version: %w: %s", err, fix)
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _ := strconv.Atoi(v[:max(strings.IndexByte(v, '.'), 0)])
	if major < minNodeMajor {
		return fmt.Errorf("jsclients: node %s is older than %d: %s", v, minNodeMajor, fix)
	}
	return nil
}

// Install returns the directory holding the pinned node modules and the
// reader script, running npm ci into the cache the first time for this
// lock file. It blocks for the install (seconds, from the npm registry).
// Safe for concurrent use by several processes: a lock file serializes
// the install and the directory appears whole, by rename.
func Install(ctx context.Context) (string, error) {
	if err := checkNode(ctx); err != nil {
		return "", err
	}
	lock, err := jsFiles.ReadFile("js/package-lock.json")
	if err != nil {
		return "", err
	}
	script, err := jsFiles.ReadFile("js/read.js")
	if err != nil {
		return "", err
	}
	cache, err := cacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(lock)
	key := hex.EncodeToString(sum[:8])
	final := filepath.Join(cache, key)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	if !installed(final) {
		if err := installLocked(ctx, cache, key, final); err != nil {
			return "", err
		}
	}
	// The script is not part of the key (editing it needs no new npm
	// ci): it is written beside node_modules under its own hash, so that
	// concurrent runs of different versions never see a half-written one.
	ssum := sha256.Sum256(script)
	path := filepath.Join(final, "read-"+hex.EncodeToString(ssum[:8])+".js")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tmp, err := os.CreateTemp(final, "read-*.tmp")
	if err != nil {
		return "", err
	}
	_, err = tmp.Write(script)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return path, nil
}

// installed reports whether dir holds a finished install.
func installed(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	return err == nil
}

// installLocked runs npm ci under the cache's lock file for key.
func installLocked(ctx context.Context, cache, key, final string) error {
	lockFile, err := os.OpenFile(filepath.Join(cache, key+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lockFile.Close()
	if err := syscall.Flock(int(lockFile.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lockFile.Fd()), syscall.LOCK_UN) //nolint:errcheck
	// Another process may have installed it meanwhile.
	if installed(final) {
		return nil
	}
	tmp, err := os.MkdirTemp(cache, "install-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := jsFiles.ReadFile("js/" + name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "jsclients: installing kafkajs, @kafkajs/confluent-schema-registry and cloudevents with npm ci into %s\n", final)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	// --ignore-scripts: none of the modules needs its install script
	// (protobufjs's only checks its optional CLI's dependencies).
	cmd := exec.CommandContext(ctx, "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("jsclients: npm ci in %s: %w: %s (check that this machine reaches the npm registry)", tmp, err, strings.TrimSpace(string(out)))
	}
	_ = os.RemoveAll(final) // a partial one from a killed install
	return os.Rename(tmp, final)
}
