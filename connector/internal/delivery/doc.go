// Package delivery is the delivery seam: both kafka.delivery modes
// (at-least-once on the pipeline's idempotent producer, exactly-once on
// transactional producers, also at-least-once in a seat for the broker's
// fence), the sinks they make for the main worker and for each copy, the
// Tracker that turns out-of-order acknowledgements into one contiguous
// durable LSN, every write to the offsets topic (the records, and the one
// ordered writer of table states), the partitioner that places outbox
// events, and the topic maker.
//
// Place in the pipeline: below the record writer, the emitter and the
// copies, which hand it records through a Sink and count them in a Tracker;
// New is the one place the mode is chosen, and no other package asks
// which one runs. A Sink's Send never blocks; a barrier (a main sink's
// Flush, a copy sink's Handover or Checkpoint) blocks until everything
// sent is acknowledged and stored with the offsets record that covers it.
//
// It must not import connector, record, emit or snapshot (they import it),
// nor pgsource: of connector/ only config, internal/fault and
// internal/phases (a handover stores a table's phase), and through fault
// connector/stream.
package delivery
