package connector

import (
	"errors"
	"fmt"
	"testing"

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
		class errClass
		table bool
	}{
		{"fenced", &FencedError{TransactionalID: "t", Err: x}, classCritical, false},
		{"txn aborted", fmt.Errorf("commit: %w", &TxnAbortedError{Err: x}), classRetryable, false},
		{"unsafe resume", &UnsafeResumeError{Reason: "x"}, classUnsafe, false},
		{"record too large", &RecordError{Topic: "t", Err: &RecordTooLargeError{}}, classCritical, true},
		{"partition range", &RecordError{Topic: "t", Err: &PartitionRangeError{}}, classCritical, true},
		{"table schema", &tableSchemaError{err: x}, classCritical, true},
		{"key rule", &keyRuleError{err: x}, classCritical, true},
		{"outbox update", &OutboxUpdateError{}, classCritical, true},
		{"value", fmt.Errorf("encode: %w", &schema.ValueError{}), classCritical, true},
		{"plain", x, classCritical, false},
	} {
		if got := classify(c.err); got != c.class {
			t.Errorf("%s: classify = %d, want %d", c.name, got, c.class)
		}
		if got := tableFault(c.err); got != c.table {
			t.Errorf("%s: tableFault = %v, want %v", c.name, got, c.table)
		}
	}
}
