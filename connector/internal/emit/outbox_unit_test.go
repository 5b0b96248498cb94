package emit

import (
	"errors"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/schema"
)

// TestOutboxRoutedTopicMustBeAKafkaName: a route-by value Kafka cannot
// name a topic after is a value error (the outbox table is parked), not a
// topic creation failure that stops the stream.
func TestOutboxRoutedTopicMustBeAKafkaName(t *testing.T) {
	for topic, ok := range map[string]bool{"outbox.event.Order": true, "a_b-c.1": true, "": false, "..": false,
		"outbox.event.bad/name": false, "outbox.event.ünicode": false, strings.Repeat("x", 250): false} {
		err := record.CheckRoutedTopic(topic)
		var ve *schema.ValueError
		if ok != (err == nil) || !ok && !errors.As(err, &ve) {
			t.Errorf("%q: %v", topic, err)
		}
	}
	var parked []string
	e := &Emitter{Config: Config{OnTableError: func(table string, _ schema.LSN, err error) { parked = append(parked, table) }}}
	for _, err := range []error{&record.RecordError{Topic: "t", Err: record.CheckRoutedTopic("a b")}, &record.OutboxUpdateError{Table: "public.outbox"}} {
		if got := e.tableError("public.outbox", 0, err); got != nil {
			t.Errorf("%v: not parked: %v", err, got)
		}
	}
	if len(parked) != 2 {
		t.Errorf("parked %v, want the outbox table twice", parked)
	}
}
