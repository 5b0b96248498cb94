// Package connector is the pipeline: it streams one Postgres publication
// into Kafka, copying each table first, and keeps its state (the durable
// LSN, each table's phase) in the offsets topic.
//
// What it owns is the wiring: New (a validated config, no I/O) and Run,
// which sets up the source (the slot, the publication, the source's
// identity against the offsets) and the Kafka clients, builds each stage
// with its own part of the configuration, its metrics, its logger and the
// functions it calls back (none holds the Pipeline), runs them, and stops
// them within shutdown_timeout; the main worker's loop around the
// replication session; the repair after a lost slot (on_slot_loss); the
// takeover from a stopped Debezium connector; the pipeline's status,
// metrics and HTTP endpoints; and the exit codes its errors map to.
//
// The flow, one way through (each stage a package of its own):
//
//	Postgres ─► connector/stream ─► main worker ─► internal/emit ─┐
//	   │        session, decoder                  stream handler ├─► internal/record ─► internal/delivery ─► Kafka
//	   └──────► internal/snapshot: COPY, chunks, private catch-up ┘   plan, codec,        sinks, tracker,
//	                                                                  the one writer      offsets writes
//	who emits each change: connector/internal/phases (the handover at P)
//	SQL outside the stream: connector/pgsource (connections, slot, catalog, publication, DDL)
//	acks ─► tracker ─► one durable LSN ─► the offsets topic, the standby status to Postgres
//
// Neighbours: connector/config (the Config), connector/pgsource (all SQL
// outside the stream), connector/stream (the replication session), the
// stages connector/internal/{snapshot,emit,record,delivery},
// connector/internal/phases (table phases and the handover rule),
// connector/internal/fault (what an error means, retries), schema (the
// change model and the encoders) and offsets (the offsets topic's
// records). Above it, connector/group runs a Pipeline per seat of
// standby instances and worker groups, through group_api.go, and
// cmd/mooncdc runs it from the command line. It must not import
// connector/group (which imports it) nor kfake (the embedded development
// Kafka is cmd/mooncdc's): TestPackagesImportOnlyAlongTheFlow.
//
// Invariants: nothing is confirmed to Postgres before Kafka has it; every
// change of a table after its snapshot is emitted by exactly one of its copy
// worker (commit LSN before the handover position P) or the main worker (at
// or after it); per key, records reach Kafka in commit order.
package connector
