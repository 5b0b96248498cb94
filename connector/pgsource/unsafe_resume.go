package pgsource

import "errors"

// UnsafeResumeError reports that the offsets in Kafka do not describe the
// Postgres source or slot that mooncdc is connected to. Resuming would lose
// or duplicate data, so the pipeline stops; the message says how to start over.
type UnsafeResumeError struct {
	Reason string
	cause  error // ErrSlotLost for a lost or missing slot (SlotLost)
}

func (e *UnsafeResumeError) Error() string { return "unsafe resume: " + e.Reason }
func (e *UnsafeResumeError) Unwrap() error { return e.cause }

// UnsafeResume marks the error for classify: stop, the offsets do not
// describe this source or slot.
func (e *UnsafeResumeError) UnsafeResume() {}

// ErrSlotLost marks the unsafe resume of a lost or missing slot, which
// on_slot_loss: resnapshot repairs (connector's slotloss.go).
var ErrSlotLost = errors.New("replication slot lost")

// SlotLost is the unsafe resume of a lost or missing slot, for reason:
// errors.Is(err, ErrSlotLost) holds.
func SlotLost(reason string) *UnsafeResumeError {
	return &UnsafeResumeError{Reason: reason, cause: ErrSlotLost}
}
