package snapshot

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/fault"
)

// A COPY that receives nothing for the timeout is ended with a
// *LinkSilentError; time the writer spends handling data (encoding,
// waiting for Kafka) is not silence.
func TestCopyWatchEndsASilentCopyOnly(t *testing.T) {
	const timeout = 200 * time.Millisecond
	// Busy in a write far longer than the timeout: not silence.
	ctx, w := watchCopy(context.Background(), "copy t", timeout)
	w.enter()
	time.Sleep(3 * timeout)
	if ctx.Err() != nil {
		t.Fatalf("ended while the writer was busy: %v", context.Cause(ctx))
	}
	w.leave()
	// Data arriving more often than the timeout: alive.
	var last time.Time
	for range 10 {
		w.enter()
		w.leave()
		last = time.Now()
		time.Sleep(timeout / 3)
	}
	if ctx.Err() != nil {
		t.Fatalf("ended while data arrived: %v", context.Cause(ctx))
	}
	// Then nothing.
	select {
	case <-ctx.Done():
	case <-time.After(10 * timeout):
		t.Fatal("a silent COPY was not ended")
	}
	if d := time.Since(last); d < timeout || d > 3*timeout {
		t.Errorf("ended %v after the last data; want within [%v, %v]", d, timeout, 3*timeout)
	}
	err := silenceCause(ctx)
	var le *LinkSilentError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "postgres.replication_timeout") || !fault.IsRetryable(&CopyError{Err: err}) {
		t.Errorf("cause %v: want a retryable *LinkSilentError naming postgres.replication_timeout", err)
	}
	w.close()
	// A closed watch ends nothing.
	ctx2, w2 := watchCopy(context.Background(), "copy t", timeout)
	w2.close()
	if silenceCause(ctx2) != nil {
		t.Errorf("closed watch: cause %v", silenceCause(ctx2))
	}
}
