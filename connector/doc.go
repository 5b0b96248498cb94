// Package connector is the pipeline: it streams one Postgres publication
// into Kafka, copying each table first, and keeps its state (the durable
// LSN, each table's phase) in the offsets topic.
//
// The data flow, and the files that hold each stage:
//
//	Postgres ──pgoutput──► main worker (stream/, emitter.go) ──┐
//	    │                                                       ├─► phase rules (phases.go, handover.go):
//	    └──snapshot──► copy workers (snapshot.go, copy*.go) ────┘   who emits a table's change
//	                   COPY + private catch-up                           │
//	                                                                     ▼
//	   relation completed from the catalog (catalog.go), keyed (keys.go), NULLs admitted (nullable.go)
//	                                                                     │
//	                                                                     ▼
//	   encode (format.go → schema's JSON/Avro encoders, flat envelope headers flatheaders.go, outbox events outbox.go; registry.go) ──► produce (emitter.go, copy_rows.go)
//	                                                                     │
//	        at-least-once: idempotent producer      exactly-once: Kafka transactions (txn.go)
//	                                                                     │
//	                                                                     ▼
//	   acks ──► tracker.go (one contiguous durable LSN) ──► offsets topic and standby status to Postgres
//
// Around it: setup.go and source.go check the source and make the slot,
// publication.go decides what goes in the publication, topics.go and
// topicname.go name and create topics, heartbeat*.go keeps an idle slot
// moving, retry.go classifies every error once, stop.go bounds a clean
// stop, standby.go runs the pipeline on only the active one of several
// instances (ha.enabled: members of a Kafka consumer group, a fresh
// Pipeline per activation; group.go is the membership), workers.go shares
// the pipelines of a config directory among the members of a worker group
// (the same seats, one per pipeline), and config*.go is the configuration (types, validation, keys and
// environment, loading, printing);
// a copy of more than one chunk resumes by chunk after a crash
// (copy_resume.go: the plan and the resume, copy_resume_stream.go: its
// stream since the base, copy_checkpoint.go: per-chunk
// checkpoints, copyslot.go: the persistent copy slot and its sweep).
//
// Invariants: nothing is confirmed to Postgres before Kafka has it; every
// change of a table after its snapshot is emitted by exactly one of its copy
// worker (commit LSN at or before the handover) or the main worker (after
// it); per key, records reach Kafka in commit order.
package connector
