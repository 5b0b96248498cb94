// Package emit is the main worker's stream handler: the Emitter takes the
// decoded changes of a replication session (begin, change, commit,
// messages), asks the phase rules per transaction which tables it emits,
// routes each change to its table's record plan, has the record writer
// make its records and its sink deliver them, counting them in the
// tracker. It also writes the transaction metadata, schema-change,
// heartbeat and outbox records of the stream, applies the schema-evolution
// policy at a DDL, resolves each relation's key (KeyResolver: the
// catalog's answer and the key rule), and parks a table whose records
// cannot be written. A copy's private catch-up and a resumed copy's stream
// use an Emitter too, for one table, without the main worker's role.
//
// Place in the pipeline: between the replication session (stream) and the
// record writer (record) and delivery; it runs on the session's goroutine
// and starts none. It must not import connector or snapshot (they import
// it): of connector/ only config, pgsource, internal/fault, internal/phases,
// internal/delivery and internal/record (and what they import).
package emit
