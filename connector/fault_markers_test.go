package connector

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/schema"
)

// TestErrorsSayWhatTheyAre holds each typed error to what it says of
// itself where it is made (a marker method): classify and tableFault
// read the markers, so an error that lost its marker changes class here.
func TestErrorsSayWhatTheyAre(t *testing.T) {
	x := errors.New("x")
	for _, c := range []struct {
		name  string
		err   error
		class fault.Class
		table bool
	}{
		{"fenced", &delivery.FencedError{TransactionalID: "t", Err: x}, fault.ClassCritical, false},
		{"txn aborted", fmt.Errorf("commit: %w", &delivery.TxnAbortedError{Err: x}), fault.ClassRetryable, false},
		{"unsafe resume", &UnsafeResumeError{Reason: "x"}, fault.ClassUnsafe, false},
		{"record too large", &record.RecordError{Topic: "t", Err: &record.RecordTooLargeError{}}, fault.ClassCritical, true},
		{"partition range", &record.RecordError{Topic: "t", Err: &delivery.PartitionRangeError{}}, fault.ClassCritical, true},
		{"table schema", &record.TableSchemaError{Err: x}, fault.ClassCritical, true},
		{"key rule", &record.KeyRuleError{Err: x}, fault.ClassCritical, true},
		{"outbox update", &record.OutboxUpdateError{}, fault.ClassCritical, true},
		{"value", fmt.Errorf("encode: %w", &schema.ValueError{}), fault.ClassCritical, true},
		{"plain", x, fault.ClassCritical, false},
	} {
		if got := fault.Classify(c.err); got != c.class {
			t.Errorf("%s: classify = %d, want %d", c.name, got, c.class)
		}
		if got := fault.TableFault(c.err); got != c.table {
			t.Errorf("%s: tableFault = %v, want %v", c.name, got, c.table)
		}
	}
}
