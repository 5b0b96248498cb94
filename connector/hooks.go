package connector

import (
	"sync"

	"github.com/mooncdc/mooncdc/connector/internal/emit"
)

// Hook points where tests pause or observe the copy workers.
const (
	HookSnapshotCreated = "snapshot_created" // temporary slot and snapshot exist
	HookCopied          = "copied"           // all rows acknowledged, before the first handover attempt
	HookChunkCopied     = "chunk_copied"     // a resumable copy's chunk was read, before its checkpoint may run
	HookCopyCheckpoint  = "copy_checkpoint"  // a resumable copy stored its progress (copy_checkpoint.go)
	HookCatchup         = "catchup"          // private catch-up about to stream
	HookBeforeHandover  = "before_handover"  // a handover attempt, before the pipeline mutex
	HookMainBegin       = emit.HookMainBegin // the main worker is about to decide a transaction
	HookHandedOver      = "handed_over_"     // + the stored phase ("ready" or "catchup"): a handover is durable and visible
)

// Hooks lets tests run code at the hook points above, with the table
// name ("" for the main worker). A hook runs on the worker's goroutine and
// may block it. Not for production use.
type Hooks struct {
	mu sync.Mutex
	fn func(point, table string)
}

// Set installs fn (nil removes it). Safe to call while the pipeline runs.
func (h *Hooks) Set(fn func(point, table string)) {
	h.mu.Lock()
	h.fn = fn
	h.mu.Unlock()
}

func (h *Hooks) call(point, table string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	fn := h.fn
	h.mu.Unlock()
	if fn != nil {
		fn(point, table)
	}
}
