package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// This file makes physical standbys: a cold copy of a cleanly stopped
// primary's data directory is a valid base backup, so no client tool
// (pg_basebackup, which the npm packages lack) is needed.

// StartStandby makes a physical standby of c and starts it: it creates the
// physical slot slot on c, stops c cleanly, copies its data directory into
// a new cluster directory, starts c again, and starts the copy with
// standby.signal, streaming from c through slot (primary_conninfo names
// the database postgres, as slot synchronization needs) with
// hot_standby_feedback. settings are applied over those. The standby runs
// the same binaries; its directory is removed by Close.
func (c *Cluster) StartStandby(ctx context.Context, slot string, settings map[string]string) (*Cluster, error) {
	if err := c.Exec(ctx, "", `SELECT pg_create_physical_replication_slot($1)`, slot); err != nil {
		return nil, err
	}
	base, err := os.MkdirTemp("", "pgtest-standby-")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Cluster, error) {
		_ = os.RemoveAll(base)
		return nil, fmt.Errorf("pgtest: standby of the cluster on port %d: %w", c.port, err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		return fail(err)
	}
	if err := c.Stop("fast"); err != nil {
		return fail(err)
	}
	// cp -a keeps the server user's ownership and the modes Postgres checks.
	out, err := exec.CommandContext(ctx, "cp", "-a", c.dataDir, filepath.Join(base, "data")).CombinedOutput()
	if err != nil {
		_ = c.StartAgain(ctx)
		return fail(fmt.Errorf("copy the data directory: %w: %s", err, out))
	}
	if err := c.StartAgain(ctx); err != nil {
		return fail(err)
	}
	signal := filepath.Join(base, "data", "standby.signal")
	if err := os.WriteFile(signal, nil, 0o600); err != nil {
		return fail(err)
	}
	if err := c.user.chown(signal); err != nil {
		return fail(err)
	}
	s := map[string]string{
		"primary_conninfo":     "host=127.0.0.1 port=" + strconv.Itoa(c.port) + " user=postgres dbname=postgres",
		"primary_slot_name":    slot,
		"hot_standby":          "on",
		"hot_standby_feedback": "on",
	}
	for k, v := range settings {
		s[k] = v
	}
	sb, err := Start(ctx, Options{Dir: base, BinDir: c.bin, Settings: s})
	if err != nil {
		return fail(err)
	}
	sb.removeDir = true
	return sb, nil
}

// NewStandby is StartStandby for a test: it fails the test with the reason,
// and closes the standby in t.Cleanup (before the primary, which New
// registered first).
func NewStandby(t testing.TB, primary *Cluster, slot string, settings map[string]string) *Cluster {
	t.Helper()
	sb, err := primary.StartStandby(t.Context(), slot, settings)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("end of the server log of the standby on port %d:\n%s", sb.Port(), sb.logTail())
		}
		if err := sb.Close(); err != nil {
			t.Errorf("%v", err)
		}
	})
	return sb
}
