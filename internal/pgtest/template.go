package pgtest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// A new cluster's data directory is a copy of a template that initdb made
// once per machine and server version, not a fresh initdb: initdb takes
// about a second (it boots a server in single-user mode several times), a
// copy of its 40 MB a tenth of that, and the integration tests start a few
// hundred clusters. A copy would share the template's database system
// identifier, which mooncdc reads to tell one source from another (a
// resume against another cluster is refused by it), so each copy gets a
// system identifier of its own, as initdb would give it: written into
// pg_control with its CRC, then pg_resetwal -f writes a WAL that carries
// it. Binaries without pg_resetwal (the npm packages) run initdb each time.

// initdbArgs are the arguments of every cluster's initdb, after -D.
var initdbArgs = []string{"-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"}

var templates sync.Map // template key → *templateOnce

type templateOnce struct {
	once sync.Once
	dir  string
	err  error
}

// templateDir returns the data directory of the template for c's binaries,
// making it first if no process has. Safe for concurrent use by several
// processes: a template appears whole, by rename.
func (c *Cluster) templateDir(ctx context.Context) (string, error) {
	if _, err := os.Stat(filepath.Join(c.bin, "pg_resetwal")); err != nil {
		return "", errNoTemplate
	}
	version, err := exec.CommandContext(ctx, filepath.Join(c.bin, "postgres"), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", filepath.Join(c.bin, "postgres"), err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%q\x00%s\x00v1", c.bin, version, initdbArgs, confFile)
	key := hex.EncodeToString(h.Sum(nil))[:16]
	v, _ := templates.LoadOrStore(key, &templateOnce{})
	t := v.(*templateOnce)
	t.once.Do(func() { t.dir, t.err = c.makeTemplate(ctx, key) })
	return t.dir, t.err
}

func (c *Cluster) makeTemplate(ctx context.Context, key string) (string, error) {
	cache, err := npmCacheDir()
	if err != nil {
		return "", err
	}
	final := filepath.Join(cache, "template-"+key)
	if _, err := os.Stat(filepath.Join(final, "PG_VERSION")); err == nil {
		return final, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	if err := c.user.checkSearchable(cache); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cache, "template-tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	data := filepath.Join(tmp, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return "", err
	}
	if err := c.user.chown(data); err != nil {
		return "", err
	}
	out, err := c.run(ctx, true, "initdb", append([]string{"-D", data}, initdbArgs...)...)
	if err != nil {
		return "", fmt.Errorf("initdb: %w\n%s", err, out)
	}
	if err := includeConf(data); err != nil {
		return "", err
	}
	// Another process may have made the same template meanwhile: its is
	// as good, and ours goes with tmp.
	if err := os.Rename(data, final); err != nil {
		if _, serr := os.Stat(filepath.Join(final, "PG_VERSION")); serr == nil {
			return final, nil
		}
		return "", err
	}
	return final, nil
}

// errNoTemplate: these binaries cannot give a copy its own identity.
var errNoTemplate = errors.New("no pg_resetwal beside initdb")

// copyTemplate fills the empty data directory c.dataDir with the
// template's files, keeping their owner and modes (cp -a).
func (c *Cluster) copyTemplate(ctx context.Context, tmpl string) error {
	out, err := exec.CommandContext(ctx, "cp", "-a", tmpl+"/.", c.dataDir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("copy the initdb template %s: %w: %s", tmpl, err, out)
	}
	if _, err := os.Stat(filepath.Join(c.dataDir, "PG_VERSION")); err != nil {
		return errors.New("copy the initdb template: no PG_VERSION in the copy")
	}
	control := filepath.Join(c.dataDir, "global", "pg_control")
	data, err := os.ReadFile(control)
	if err != nil {
		return err
	}
	if err := setSystemIdentifier(data, newSystemIdentifier()); err != nil {
		return fmt.Errorf("%s: %w", control, err)
	}
	if err := os.WriteFile(control, data, 0o600); err != nil {
		return err
	}
	if out, err := c.run(ctx, true, "pg_resetwal", "-f", "-D", c.dataDir); err != nil {
		return fmt.Errorf("pg_resetwal: %w\n%s", err, out)
	}
	return nil
}

// newSystemIdentifier makes an identifier the way initdb does (the time in
// seconds in the high half), with random low bits instead of the
// microseconds and PID, so that clusters made in the same second differ.
func newSystemIdentifier() uint64 {
	return uint64(time.Now().Unix())<<32 | uint64(rand.Uint32())
}

// setSystemIdentifier writes id into a pg_control image: the identifier is
// the struct's first field, and the CRC-32C of the bytes before it is
// stored right after them (the CRC field ends ControlFileData, whose size
// differs between major versions, so it is found as the one offset whose
// stored value is the CRC of what precedes it).
func setSystemIdentifier(control []byte, id uint64) error {
	table := crc32.MakeTable(crc32.Castagnoli)
	for off := 16; off+4 <= len(control) && off <= 1024; off += 4 {
		if binary.LittleEndian.Uint32(control[off:]) != crc32.Checksum(control[:off], table) {
			continue
		}
		binary.LittleEndian.PutUint64(control[0:8], id)
		binary.LittleEndian.PutUint32(control[off:], crc32.Checksum(control[:off], table))
		return nil
	}
	return errors.New("no valid CRC found in pg_control")
}
