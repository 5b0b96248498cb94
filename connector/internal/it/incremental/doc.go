// Package incremental holds connector's integration tests of incremental
// snapshots (docs/incremental-snapshots.md): a table re-snapshotted in
// chunks between watermarks while its changes keep streaming, under a
// write load, rebuilt by a consumer from its topic; and a snapshot that
// resumes by chunk after a crash. One Postgres cluster for the package (a
// database per test), a kfake broker per test. It has tests only; its
// helpers are connector/internal/it/ittest's, and it drives connector's
// exported API (with small chunks and slow reads set per test through
// ittest.Tune, so its tests run in parallel).
package incremental
