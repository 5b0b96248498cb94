package pgtest

import (
	"context"
	"fmt"
	"testing"
)

// This file lets a test require a PostgreSQL extension that is not part of
// the server packages (PostGIS). A missing extension fails the test with the
// command that installs it; it never skips, so a CI machine without it
// cannot pass by running less.

// extensionPackages names the Debian package of an extension, %d being the
// server's major version.
var extensionPackages = map[string]string{
	"postgis": "postgresql-%d-postgis-3",
}

// ExtensionInstallHint is the command that installs extension name for a
// server of major version major, as a missing-extension failure states it.
func ExtensionInstallHint(name string, major int) string {
	if pkg, ok := extensionPackages[name]; ok {
		return fmt.Sprintf("apt-get install -y "+pkg+" (.ci/run installs it)", major)
	}
	return fmt.Sprintf("install the %q extension's files for PostgreSQL %d", name, major)
}

// MissingExtension reports whether the server of c cannot create extension
// name (its control file is not in the server's extension directory), and
// then an error naming the install command. It asks the server
// (pg_available_extensions), so it holds for any binaries BinDir found.
func (c *Cluster) MissingExtension(ctx context.Context, database, name string) error {
	conn, err := c.Connect(ctx, database)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var available bool
	var major int
	err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = $1),
		current_setting('server_version_num')::int / 10000`, name).Scan(&available, &major)
	if err != nil {
		return fmt.Errorf("look up extension %q: %w", name, err)
	}
	if available {
		return nil
	}
	return fmt.Errorf("the PostgreSQL %d server in %s has no %q extension; this test needs it: %s; "+
		"binaries from npm (PGTEST_VERSION without Debian's package) cannot get it: use Debian's postgresql-%d, "+
		"or set PGTEST_BINDIR to a server that has the extension",
		major, c.bin, name, ExtensionInstallHint(name, major), major)
}

// RequireExtension fails t (never skips it) unless the server of c has
// extension name available in database, then creates it there in schema
// (empty: the default, public). Call it from the test's goroutine.
func RequireExtension(t testing.TB, c *Cluster, database, name, schema string) {
	t.Helper()
	ctx := context.Background()
	if err := c.MissingExtension(ctx, database, name); err != nil {
		t.Fatalf("%v", err)
		return
	}
	sql := "CREATE EXTENSION IF NOT EXISTS " + quoteIdent(name)
	if schema != "" {
		sql = "CREATE SCHEMA IF NOT EXISTS " + quoteIdent(schema) + "; " + sql + " SCHEMA " + quoteIdent(schema)
	}
	if err := c.Exec(ctx, database, sql); err != nil {
		t.Fatalf("create extension %q: %v", name, err)
	}
}

// quoteIdent double-quotes an SQL identifier.
func quoteIdent(s string) string {
	out := []byte{'"'}
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			out = append(out, '"')
		}
		out = append(out, s[i])
	}
	return string(append(out, '"'))
}
