package pgtest

import (
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// This file fetches npmPackage without the npm client, for a machine with
// only Go: the registry's package document lists every version with its
// tarball and integrity (the npm registry API's "packument"), and the
// tarball is checked against that integrity before it is unpacked. With npm
// installed, npm.go uses it instead (it honours the user's .npmrc).

// defaultRegistry is npm's default registry; $npm_config_registry (as npm
// itself reads it) overrides it.
const defaultRegistry = "https://registry.npmjs.org/"

func registryURL() string {
	for _, k := range []string{"npm_config_registry", "NPM_CONFIG_REGISTRY"} {
		if v := os.Getenv(k); v != "" {
			return strings.TrimSuffix(v, "/") + "/"
		}
	}
	return defaultRegistry
}

// npmDist is a version's tarball and its integrity ("sha512-<base64>").
type npmDist struct {
	Tarball   string `json:"tarball"`
	Integrity string `json:"integrity"`
}

// httpVersions reads the package document of npmPackage from registry.
func httpVersions(ctx context.Context, registry string) (map[string]npmDist, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	u := registry + url.PathEscape(npmPackage)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read %s from the npm registry: %w", npmPackage, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read %s from the npm registry %s: HTTP %s", npmPackage, registry, resp.Status)
	}
	var doc struct {
		Versions map[string]struct {
			Dist npmDist `json:"dist"`
		} `json:"versions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return nil, fmt.Errorf("read %s from the npm registry: %w", npmPackage, err)
	}
	out := make(map[string]npmDist, len(doc.Versions))
	for v, d := range doc.Versions {
		out[v] = d.Dist
	}
	return out, nil
}

// httpPack downloads dist's tarball into dir, checks its integrity, and
// returns its path.
func httpPack(ctx context.Context, dist npmDist, dir string) (string, error) {
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
