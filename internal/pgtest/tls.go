package pgtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// EnableTLS makes the running server accept TLS with the given certificate
// and key (PEM): it writes them into the data directory, owned by the
// server's OS user with mode 0600 as Postgres requires, turns ssl on with
// ALTER SYSTEM and reloads the configuration. Plain connections are still
// accepted; a client asks for TLS with sslmode. Blocks until the reload is
// requested.
func (c *Cluster) EnableTLS(ctx context.Context, certPEM, keyPEM []byte) error {
	st, err := os.Stat(c.dataDir)
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("pgtest: cannot tell the owner of %s", c.dataDir)
	}
	for name, data := range map[string][]byte{"server.crt": certPEM, "server.key": keyPEM} {
		p := filepath.Join(c.dataDir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return err
		}
		if err := os.Chown(p, int(sys.Uid), int(sys.Gid)); err != nil && os.Geteuid() == 0 {
			return err
		}
	}
	for _, sql := range []string{"ALTER SYSTEM SET ssl = on", "ALTER SYSTEM SET ssl_cert_file = 'server.crt'",
		"ALTER SYSTEM SET ssl_key_file = 'server.key'", "SELECT pg_reload_conf()"} {
		if err := c.Exec(ctx, "", sql); err != nil {
			return err
		}
	}
	return nil
}
