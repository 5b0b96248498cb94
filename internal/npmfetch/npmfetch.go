package npmfetch

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// defaultRegistry is npm's default registry; $npm_config_registry (as npm
// itself reads it) overrides it.
const defaultRegistry = "https://registry.npmjs.org/"

// Registry returns the registry's URL, ending in a slash.
func Registry() string {
	for _, k := range []string{"npm_config_registry", "NPM_CONFIG_REGISTRY"} {
		if v := os.Getenv(k); v != "" {
			return strings.TrimSuffix(v, "/") + "/"
		}
	}
	return defaultRegistry
}

// Dist is a version's tarball and its integrity ("sha512-<base64>").
type Dist struct {
	Tarball   string `json:"tarball"`
	Integrity string `json:"integrity"`
}

// Versions reads the package document of pkg from registry: every
// published version and its Dist.
func Versions(ctx context.Context, registry, pkg string) (map[string]Dist, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	u := registry + url.PathEscape(pkg)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read %s from the npm registry: %w", pkg, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read %s from the npm registry %s: HTTP %s", pkg, registry, resp.Status)
	}
	var doc struct {
		Versions map[string]struct {
			Dist Dist `json:"dist"`
		} `json:"versions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return nil, fmt.Errorf("read %s from the npm registry: %w", pkg, err)
	}
	out := make(map[string]Dist, len(doc.Versions))
	for v, d := range doc.Versions {
		out[v] = d.Dist
	}
	return out, nil
}

// Pack downloads dist's tarball into dir, checks its integrity, and
// returns its path.
func Pack(ctx context.Context, dist Dist, dir string) (string, error) {
	algo, want, ok := strings.Cut(dist.Integrity, "-")
	if !ok || algo != "sha512" {
		return "", fmt.Errorf("%s: integrity %q is not sha512-<base64>", dist.Tarball, dist.Integrity)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, dist.Tarball, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("download %s: %w", dist.Tarball, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("download %s: HTTP %s", dist.Tarball, resp.Status)
	}
	path := filepath.Join(dir, "package.tgz")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	h := sha512.New()
	_, err = io.Copy(io.MultiWriter(f, h), resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("download %s: %w", dist.Tarball, err)
	}
	if got := base64.StdEncoding.EncodeToString(h.Sum(nil)); got != want {
		return "", fmt.Errorf("download %s: its sha512 is %s, the registry says %s", dist.Tarball, got, want)
	}
	return path, nil
}

// Untar unpacks the gzipped tar file into dir, refusing paths that leave
// it. Only directories and regular files are unpacked (npm tarballs hold
// nothing else); a file keeps whether it is executable.
func Untar(file, dir string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			mode := os.FileMode(0o644)
			if h.Mode&0o111 != 0 {
				mode = 0o755
			}
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}
