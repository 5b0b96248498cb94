package emit

import (
	"errors"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/schema"
)

// TestOutboxEventErrorMakesARangeErrorTheRecordsError: the topic maker
// reports an event for a partition its topic lacks as a bare
// *PartitionRangeError; the outbox makes it the record's *RecordError
// (topic, LSN), which parks the table, and leaves any other error (the
// topic could not be made) as it was.
func TestOutboxEventErrorMakesARangeErrorTheRecordsError(t *testing.T) {
	ev := &schema.OutboxEvent{Topic: "outbox.event.order", Partition: 7, Placed: true}
	var re *record.RecordError
	err := OutboxEventError(&delivery.PartitionRangeError{Partition: 7, Count: 3}, ev, 42)
	if !errors.As(err, &re) || re.Topic != ev.Topic || re.LSN != 42 || !errors.As(err, new(*delivery.PartitionRangeError)) || !fault.TableFault(err) {
		t.Errorf("range error: got %#v, want a *RecordError for %s at 42 wrapping the *PartitionRangeError", err, ev.Topic)
	}
	other := errors.New("create topic: broker down")
	if got := OutboxEventError(other, ev, 42); got != other {
		t.Errorf("other error: got %v, want it unchanged", got)
	}
	if got := OutboxEventError(nil, ev, 42); got != nil {
		t.Errorf("nil: got %v", got)
	}
}
