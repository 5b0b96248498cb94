package emit

import (
	"bytes"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/schema"
)

// heartbeat handles a heartbeat message in the main stream: its LSN becomes
// durable as its own unit, with a record on the heartbeat topic when
// heartbeat.records is on and the message is this connector's.
// Transactional messages with the prefix (not mooncdc's) go with their
// transaction and write nothing.
func (e *Emitter) heartbeat(ch *schema.Change) error {
	if ch.Tx != nil {
		return nil
	}
	mine := bytes.HasPrefix(ch.Message.Content, e.HeartbeatOf)
	return e.ownUnit(ch.LSN, func(a *delivery.TxAck) error {
		if e.HeartbeatFmt == nil || !mine {
			return nil
		}
		rec, err := e.w.Heartbeat(a, e.HeartbeatTopic, e.HeartbeatFmt, ch)
		if err != nil {
			return err
		}
		e.w.Send(rec)
		return nil
	})
}
