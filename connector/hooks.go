package connector

import (
	"sync"

	"github.com/mooncdc/mooncdc/connector/internal/emit"
)

// HookMainBegin is where the main worker is about to decide a
// transaction; the copies' hook points are in snapshot_api.go.
const HookMainBegin = emit.HookMainBegin

// Hooks lets tests run code at the hook points (HookMainBegin, and the
// copies' in snapshot_api.go), with the table
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

// HookWindowWritten is where the main worker has handed an incremental
// snapshot window's rows to Kafka (and, exactly-once, taken the table's
// progress into the open transaction), before the unit that holds them
// ends.
const HookWindowWritten = emit.HookWindowWritten

// HookSlotReplaced is where on_slot_loss: resnapshot has created the new
// slot of a lost one, before the pipeline streams from it
// (slotloss.go): a crash there must still repair the gap.
const HookSlotReplaced = "slot-replaced"
