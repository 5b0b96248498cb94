package pgtest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// PgvectorStandinEnv is the environment variable that lets the tests run
// without pgvector: set to 1, Pgvector creates a stand-in of its types.
const PgvectorStandinEnv = "MOONCDC_PGVECTOR_STANDIN"

// pgvectorInstall is how to get pgvector for the server binaries in use.
const pgvectorInstall = "pgvector is not installed for the PostgreSQL server the tests run (no 'vector' in pg_available_extensions). " +
	"Build it from a pgvector release's source (github.com/pgvector/pgvector, e.g. v0.8.1): " +
	"apt-get install -y postgresql-server-dev-15 && make && make install (in the source directory, as root); " +
	"or set " + PgvectorStandinEnv + "=1 to test the mapping against a stand-in of its types"

// Pgvector makes pgvector's types vector, halfvec and sparsevec available
// in schema sch of database db and reports whether they are a stand-in.
//
// With pgvector installed for the cluster's server it runs CREATE
// EXTENSION vector SCHEMA sch. Without it, and with MOONCDC_PGVECTOR_STANDIN=1,
// it creates three base types of those names whose I/O is Postgres' own
// text I/O (LANGUAGE internal textin/textout) and whose typmod is bit's, so
// that vector(3) parses and values round-trip as the text written; it
// says so in the test log. Without either, the test fails with how to
// install pgvector. Call it from the test's goroutine.
func (c *Cluster) Pgvector(t testing.TB, db, sch string) (standin bool) {
	t.Helper()
	ctx := context.Background()
	conn, err := c.Connect(ctx, db)
	if err != nil {
		t.Fatalf("pgvector: %v", err)
	}
	defer conn.Close(ctx)
	var available bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')`).Scan(&available); err != nil {
		t.Fatalf("pgvector: %v", err)
	}
	if available {
		if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector SCHEMA "+pgx.Identifier{sch}.Sanitize()); err != nil {
			t.Fatalf("pgvector: create extension: %v", err)
		}
		return false
	}
	if os.Getenv(PgvectorStandinEnv) != "1" {
		t.Fatalf("%s", pgvectorInstall)
	}
	if err := CreateVectorStandin(ctx, conn, sch); err != nil {
		t.Fatalf("pgvector stand-in: %v", err)
	}
	msg := fmt.Sprintf("pgvector: USING A STAND-IN of vector, halfvec and sparsevec (text I/O, no validation) in schema %q, "+
		"because pgvector is not installed and %s=1; the mapping is tested, pgvector's own output is not", sch, PgvectorStandinEnv)
	t.Log(msg)
	fmt.Fprintln(os.Stderr, msg)
	return true
}

// CreateVectorStandin creates base types named vector, halfvec and
// sparsevec in schema sch, stored and printed as the text they are given
// (textin/textout), with bit's typmod functions so that a declared
// dimension such as vector(3) is accepted. It needs a superuser (C-level
// I/O functions). Tests also use it, pgvector installed or not, for values
// that real pgvector would refuse.
func CreateVectorStandin(ctx context.Context, conn *pgx.Conn, sch string) error {
	s := pgx.Identifier{sch}.Sanitize()
	for _, name := range []string{"vector", "halfvec", "sparsevec"} {
		ty := s + "." + pgx.Identifier{name}.Sanitize()
		fn := func(suffix string) string { return s + "." + pgx.Identifier{name + "_standin_" + suffix}.Sanitize() }
		sql := fmt.Sprintf(`CREATE TYPE %[1]s;
CREATE FUNCTION %[2]s(cstring) RETURNS %[1]s AS 'textin' LANGUAGE internal IMMUTABLE STRICT;
CREATE FUNCTION %[3]s(%[1]s) RETURNS cstring AS 'textout' LANGUAGE internal IMMUTABLE STRICT;
CREATE FUNCTION %[4]s(cstring[]) RETURNS int4 AS 'bittypmodin' LANGUAGE internal IMMUTABLE STRICT;
CREATE FUNCTION %[5]s(int4) RETURNS cstring AS 'bittypmodout' LANGUAGE internal IMMUTABLE STRICT;
CREATE TYPE %[1]s (INPUT = %[2]s, OUTPUT = %[3]s, TYPMOD_IN = %[4]s, TYPMOD_OUT = %[5]s, LIKE = text);`,
			ty, fn("in"), fn("out"), fn("typmod_in"), fn("typmod_out"))
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("create %s: %w", ty, err)
		}
	}
	return nil
}
