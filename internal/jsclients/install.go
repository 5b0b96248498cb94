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
	"strings"
	"syscall"
	"time"
)

// This file installs the pinned node modules once per lock file into a
// cache directory, as internal/pgtest caches the server binaries it
// fetches from npm.

//go:embed js/package.json js/package-lock.json js/read.js
var jsFiles embed.FS

// minNodeMajor is the oldest Node.js of the machine's the harness uses
// (else it fetches its own, node.go): Debian 12's nodejs (18). cloudevents
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

// Install returns the directory holding the pinned node modules and the
// reader script, running npm ci into the cache the first time for this
// lock file, with the machine's node and npm or, when they are missing or
// too old, the pinned ones it fetches (node.go). It blocks for the
// install (seconds, from the npm registry; the first fetch of Node.js
// too).
// Safe for concurrent use by several processes: a lock file serializes
// the install and the directory appears whole, by rename.
func Install(ctx context.Context) (string, error) {
	_, script, err := install(ctx)
	return script, err
}

// install is Install, also returning the node and npm it used.
func install(ctx context.Context) (toolchain, string, error) {
	tc, err := findNode(ctx)
	if err != nil {
		return tc, "", err
	}
	lock, err := jsFiles.ReadFile("js/package-lock.json")
	if err != nil {
		return tc, "", err
	}
	script, err := jsFiles.ReadFile("js/read.js")
	if err != nil {
		return tc, "", err
	}
	cache, err := cacheDir()
	if err != nil {
		return tc, "", err
	}
	sum := sha256.Sum256(lock)
	key := hex.EncodeToString(sum[:8])
	final := filepath.Join(cache, key)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return tc, "", err
	}
	if !installed(final) {
		if err := installLocked(ctx, tc, cache, key, final); err != nil {
			return tc, "", err
		}
	}
	// The script is not part of the key (editing it needs no new npm
	// ci): it is written beside node_modules under its own hash, so that
	// concurrent runs of different versions never see a half-written one.
	ssum := sha256.Sum256(script)
	path := filepath.Join(final, "read-"+hex.EncodeToString(ssum[:8])+".js")
	if _, err := os.Stat(path); err == nil {
		return tc, path, nil
	}
	tmp, err := os.CreateTemp(final, "read-*.tmp")
	if err != nil {
		return tc, "", err
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
		return tc, "", err
	}
	return tc, path, nil
}

// installed reports whether dir holds a finished install.
func installed(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	return err == nil
}

// installLocked runs npm ci under the cache's lock file for key.
func installLocked(ctx context.Context, tc toolchain, cache, key, final string) error {
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
	args := append(tc.npm[1:len(tc.npm):len(tc.npm)], "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd := exec.CommandContext(ctx, tc.npm[0], args...)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "PATH="+tc.path)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("jsclients: npm ci in %s: %w: %s (check that this machine reaches the npm registry)", tmp, err, strings.TrimSpace(string(out)))
	}
	_ = os.RemoveAll(final) // a partial one from a killed install
	return os.Rename(tmp, final)
}
