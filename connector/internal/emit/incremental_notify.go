package emit

import (
	"github.com/mooncdc/mooncdc/connector/internal/notify"
	"github.com/mooncdc/mooncdc/schema"
)

// This file writes the incremental snapshots' notifications (Debezium's
// sink channel, notification.sink.topic.name): the snapshotter decides
// when one is due and hands it over (Notify); the main worker writes it
// through the one record writer, in the next unit of durability it
// makes (a transaction's BEGIN or COMMIT, or an idle position of its
// own), so a notification is as durable as the stream around it:
// at-least-once, and in exactly-once mode inside the stream's Kafka
// transaction (a transaction aborted loses it with the changes, and the
// snapshot that resumes writes its chunks' IN_PROGRESS again).

// Notify queues n for the main worker, which writes it at its next unit
// of durability after the ones already queued (in the order Notify was
// called). It does not block and is safe for concurrent use; without a
// notification topic the main worker drops it.
func (q *Incremental) Notify(n notify.Notification) {
	q.enqueue(&incRequest{kind: incNotify, note: n})
}

// queued reports whether tombstones or notifications wait for a unit.
func (q *Incremental) queued() bool { return len(q.tombs) > 0 || len(q.notes) > 0 }

// writeQueued writes the queued tombstones, then the queued
// notifications, in e.cur with the headers of position at.
func (e *Emitter) writeQueued(at schema.LSN) error {
	q := e.Incremental
	if len(q.tombs) > 0 {
		e.writeTombstones(at)
	}
	for i, n := range q.notes {
		if e.NotifyFmt == nil {
			break
		}
		rec, err := e.w.Notification(e.cur, e.NotifyTopic, e.NotifyFmt, n, at, q.nextSeq(at))
		if err != nil {
			q.notes = q.notes[i:]
			return err
		}
		e.w.Send(rec)
	}
	clear(q.notes)
	q.notes = q.notes[:0]
	return nil
}
