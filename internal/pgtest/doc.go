// Package pgtest starts throwaway PostgreSQL clusters for tests, benchmarks
// and the demo program.
//
// It sits beside the pipeline, not in it: connector, schema and offsets tests
// use it as their "fake" Postgres, the way franz-go's kfake stands in for Kafka.
// Nothing in the production path imports it.
//
// A Cluster is a real server from the machine's PostgreSQL binaries (see
// BinDir), created with initdb in a fresh directory and started with pg_ctl. It
// listens on 127.0.0.1 only, on a port of its own, with trust authentication
// for the database role "postgres", wal_level=logical and durability
// switched off (fsync, full_page_writes) for speed. Settings can be
// overridden through Options.Settings.
//
// Invariants:
//
//   - Every cluster has its own directory and port, so tests that start
//     clusters in parallel do not interfere. Ports picked by one process are
//     never handed out twice.
//   - Close always leaves no server running and, for a directory Start made
//     itself, no files behind, even after a failed test or a failed Stop.
//   - A commit that returned before Stop or Restart, in any mode, survives it:
//     synchronous_commit stays on (with fsync off that costs one write(2) per
//     commit), because an immediate stop drops WAL that an asynchronous commit
//     left in shared memory, and a walsender streams only flushed WAL.
//   - The server never runs as root. When the process is root, initdb,
//     pg_ctl, the server and Command's programs run as the OS user
//     "postgres", which owns the data directory.
//
// Server output (and the output of initdb and pg_ctl) goes to Options.Log, or
// to postgres.log in the cluster directory. The last few kilobytes are kept in
// memory and quoted in start errors; New logs them when the test failed.
//
// If the binaries are missing, Start fails with an error that says how to
// install them; New turns that into t.Fatal, never t.Skip. Set PGTEST_BINDIR
// to use binaries from a non-standard place.
//
// A test that needs an extension outside the server packages (PostGIS)
// calls RequireExtension: when the server lacks the extension's files the
// test fails with the command that installs them, never skips.
//
// If the process dies without calling Close (a go test timeout, SIGKILL), the
// server keeps running: pg_ctl detaches it into its own session. Such
// leftovers live in $TMPDIR/pgtest-*; stop them with
// "pg_ctl stop -m immediate -D $TMPDIR/pgtest-XXX/data".
package pgtest
