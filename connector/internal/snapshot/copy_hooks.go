package snapshot

// Hook points where tests pause or observe the copy workers (Config.Hook;
// connector.Hooks).
const (
	HookSnapshotCreated = "snapshot_created" // temporary slot and snapshot exist
	HookCopied          = "copied"           // all rows acknowledged, before the first handover attempt
	HookChunkCopied     = "chunk_copied"     // a resumable copy's chunk was read, before its checkpoint may run
	HookCopyCheckpoint  = "copy_checkpoint"  // a resumable copy stored its progress (copy_checkpoint.go)
	HookCatchup         = "catchup"          // private catch-up about to stream
	HookBeforeHandover  = "before_handover"  // a handover attempt, before the pipeline mutex
	HookHandedOver      = "handed_over_"     // + the stored phase ("ready" or "catchup"): a handover is durable and visible
	HookStaleKeysRead   = "stale_keys_read"  // an incremental snapshot begins reading a topic's keys (incremental_stale.go)
	HookChunkSnapshot   = "chunk_snapshot"   // an incremental snapshot's chunk has its lock and snapshot, before its catalog check and COPY (incremental_reader.go)
)
