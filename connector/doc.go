// Package connector is the pipeline: it streams one Postgres publication
// into Kafka, copying each table first, and keeps its state (the durable
// LSN, each table's phase) in the offsets topic.
//
// The data flow, one way through, and the files that hold each stage:
//
//	source (Postgres)
//	  stream/ (pgoutput session) ──► main worker: emitter.go ───────────┐
//	  copy.go, copy_rows.go (COPY)  ─► copy workers: snapshot.go ────────┤  phase rules: internal/phases, handover.go
//	  copy_catchup.go (private catch-up on the copy's slot) ────────────┤  (who emits a table's change)
//	  pgsource, keys.go (columns, types, the one key of a table) ───────┤
//	                                                                     ▼
//	plan        plan.go: per relation, once: topic, key, envelope (outbox.go,
//	            flat headers flatheaders.go), NOT NULL relaxing (nullable.go);
//	            the encoders' per-column plan is schema's
//	                                                                     ▼
//	record writer   writer.go: encode (format.go → schema's JSON/Avro,
//	            registry.go), size check, headers (headers.go), count in the
//	            tracker, hand to the sink: the one place a record is made
//	                                                                     ▼
//	sink (Kafka)    sink.go: the delivery seam, chosen once;
//	            sink_alo.go (at-least-once: idempotent producer),
//	            sink_eos.go (exactly-once, and at-least-once in a standby or
//	            worker group: Kafka transactions carrying the offsets, fenced)
//	                                                                     ▼
//	tracker     tracker.go: acks ──► one contiguous durable LSN ──► the offsets
//	            topic (the sink's checkpoint) and the standby status to Postgres
//
// Around it: setup.go and pgsource check the source and make the slot,
// pgsource decides what goes in the publication, topics.go and
// topicname.go name and create topics (a snapshot run's in one request),
// link.go bounds every Postgres connection against a half-open link
// (socket options, query deadlines, a silent COPY) and linkwatch.go keeps
// /readyz true to the links,
// prefetch.go registers a snapshot run's Avro schemas many at once ahead
// of its copies, heartbeat*.go keeps an idle slot
// moving, internal/fault classifies every error once (Classify for the
// pipeline, TableFault for a table), stop.go bounds a clean stop,
// standby.go runs the pipeline on only the active one of several
// instances (ha.enabled: members of a Kafka consumer group, a fresh
// Pipeline per activation; group.go is the membership), workers.go shares
// the pipelines of a config directory among the members of a worker group
// (the same seats, one per pipeline), and package config is the
// configuration (types, validation, keys and environment, loading,
// printing, the Postgres and Kafka dialers). A copy of
// more than one chunk resumes by chunk after a crash (copy_resume.go: the
// plan and the resume, copy_resume_stream.go: its stream since the base,
// copy_checkpoint.go: per-chunk checkpoints, copyslot.go: the persistent
// copy slot and its sweep).
//
// Each component is built with its own part of the configuration, its
// metrics and its logger (emitterConfig, copierConfig, snapshotterConfig,
// deliveryConfig), and the functions it calls back; none holds the
// Pipeline. The Pipeline itself keeps what is the pipeline's alone: setting
// up the source and the Kafka clients, and Run.
//
// Invariants: nothing is confirmed to Postgres before Kafka has it; every
// change of a table after its snapshot is emitted by exactly one of its copy
// worker (commit LSN before the handover position P) or the main worker (at
// or after it); per key, records reach Kafka in commit order.
package connector
