package record

import (
	"fmt"

	"github.com/mooncdc/mooncdc/schema"
)

// RecordError is a change that could not be turned into a record.
type RecordError struct {
	Topic string
	LSN   schema.LSN
	Err   error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("encode change at LSN %s for topic %q: %v", e.LSN, e.Topic, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Fatal marks the error as one no retry fixes: a value that cannot be
// encoded; retrying would crash-loop.
func (e *RecordError) Fatal() {}
