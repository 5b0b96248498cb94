package connector

import "github.com/mooncdc/mooncdc/connector/internal/snapshot"

// The names of connector/internal/snapshot that callers outside
// connector/ (cmd/mooncdc, internal/*) and the pipeline's tests use.

// CopyProgress is one table copy in progress (Pipeline.Copies, /status).
type CopyProgress = snapshot.CopyProgress

// The stages of a copy in CopyProgress.
const (
	CopyStageStarting   = snapshot.CopyStageStarting // snapshot taken, reading the topic's live keys
	CopyStageCopying    = snapshot.CopyStageCopying
	CopyStageCatchingUp = snapshot.CopyStageCatchingUp
)

// Hook points where tests pause or observe the copy workers (Hooks).
const (
	HookSnapshotCreated = snapshot.HookSnapshotCreated // temporary slot and snapshot exist
	HookCopied          = snapshot.HookCopied          // all rows acknowledged, before the first handover attempt
	HookChunkCopied     = snapshot.HookChunkCopied     // a resumable copy's chunk was read, before its checkpoint may run
	HookCopyCheckpoint  = snapshot.HookCopyCheckpoint  // a resumable copy stored its progress
	HookCatchup         = snapshot.HookCatchup         // private catch-up about to stream
	HookBeforeHandover  = snapshot.HookBeforeHandover  // a handover attempt, before the pipeline mutex
	HookHandedOver      = snapshot.HookHandedOver      // + the stored phase ("ready" or "catchup"): a handover is durable and visible
	HookStaleKeysRead   = snapshot.HookStaleKeysRead   // an incremental snapshot begins reading a topic's keys, while its chunks are read
	HookChunkSnapshot   = snapshot.HookChunkSnapshot   // an incremental snapshot's chunk has its table lock and snapshot, before its COPY
)
