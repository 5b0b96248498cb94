// Package offsets owns mooncdc's compacted offsets topic: the one place the
// connector's state lives (nothing is kept on local disk).
//
// Place in the pipeline: the connector loads the state once at start
// ([EnsureTopic], then [Load]) and from then on produces records built here
// ([PipelineRecord], [TableRecord], [DeleteTableRecord]) after Kafka has
// acknowledged the data they cover; in exactly-once mode inside the same
// Kafka transaction. This package knows nothing about workers, phases'
// rules or Postgres; it stores and reads back values.
//
// Format (Kafka Connect's source-offset shape, so Connect tooling can read
// it): the key is the JSON array ["<connector name>",{partition}] and the
// value a JSON object; a null value (tombstone) deletes the key. Two kinds
// of partition:
//
//	["shop",{"source":"pipeline"}]      -> Pipeline: source identity and durable LSN
//	["shop",{"table":"public.orders"}]  -> Table: oid, phase, LSN, attempts, last error, resnapshot request,
//	                                       a resumable copy's progress (CopyProgress)
//
// Invariants:
//   - One partition, cleanup.policy=compact ([EnsureTopic] refuses anything
//     else): one partition keeps every write in one order, and compaction
//     without deletion keeps the latest value of every key forever.
//   - Keys are written byte-for-byte canonical ([PipelineKey], [TableKey]),
//     because compaction compares key bytes: two spellings of one key would
//     both survive. Decoding accepts any JSON spelling and applies records
//     by meaning, in log order, so the newest write wins either way.
//   - Decoding is pure ([Decode]); only [EnsureTopic] and [Load] touch the
//     network. Records of other connector names are skipped unread, so
//     several connectors may share a topic; a record of ours that does not
//     decode is an error ([*MalformedError]), never skipped, because
//     skipping it could resume from an older position.
//   - [Load] reads read_committed up to the high watermark as of the call:
//     records of aborted transactions are never loaded, and it does not stop
//     short at a transaction still open (see Load for why and for the
//     ordering the caller must keep in exactly-once mode).
package offsets
