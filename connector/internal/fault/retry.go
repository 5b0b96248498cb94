package fault

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/stream"
	"github.com/mooncdc/mooncdc/schema"
)

// Class is what an error means for the pipeline.
type Class int

const (
	ClassCritical  Class = iota // stop with a clear message
	ClassRetryable              // reconnect with backoff, resume from the durable LSN
	ClassUnsafe                 // the source or slot is not the one the offsets describe
)

// CriticalError marks an error that must stop the pipeline.
type CriticalError struct{ Err error }

func (e *CriticalError) Error() string { return e.Err.Error() }
func (e *CriticalError) Unwrap() error { return e.Err }

// Fatal marks the error as one that must stop the pipeline.
func (e *CriticalError) Fatal() {}

// Classify decides, in one place, what an error means for the pipeline.
// Errors say what they are where they are made, by a marker method
// (UnsafeResume, Fatal, Retryable), so that classify needs no package's
// error types beyond the stream's and the drivers'.
func Classify(err error) Class {
	var (
		unsafe    interface{ UnsafeResume() }
		fatal     interface{ Fatal() }
		retryable interface{ Retryable() }
		proto     *stream.ProtocolError
		pgErr     *pgconn.PgError
		netErr    net.Error
	)
	switch {
	case err == nil:
		return ClassRetryable
	case errors.As(err, &unsafe):
		return ClassUnsafe
	case IsNotKafka(err):
		return ClassCritical // the address is wrong: no retry makes it Kafka
	case errors.As(err, &fatal):
		// criticalError, a ConfigError, a FencedError, and a RecordError
		// (a value that cannot be encoded; retrying would crash-loop). The
		// RecordError was a case of its own after TxnAbortedError; the order
		// cannot matter, since a TxnAbortedError wraps only what the
		// transactional producer returned (delivery.TxnError), and a
		// record that failed to encode is never produced.
		return ClassCritical
	case config.CertificateError(err):
		// A server certificate that does not verify stays so until a
		// person changes the CA setting or the certificate.
		return ClassCritical
	case errors.As(err, &retryable): // a TxnAbortedError
		return ClassRetryable // aborted; the next session replays from the last commit
	case errors.As(err, &proto):
		// The stream's bytes made no sense; reading them again will not help.
		return ClassCritical
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed),
		errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, kerr.PolicyViolation),
		errors.Is(err, kerr.InvalidReplicationFactor), errors.Is(err, kerr.InvalidTopicException):
		return ClassCritical
	case errors.As(err, &pgErr):
		switch {
		case pgErr.Code == "55006": // object_in_use: the slot is still held by an old session
			return ClassRetryable
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // shutdown, crash, cannot connect now
			return ClassRetryable
		case pgErr.Code == "53300": // too_many_connections
			return ClassRetryable
		case len(pgErr.Code) == 2+3 && pgErr.Code[:2] == "08": // connection exception
			return ClassRetryable
		default:
			// Privileges, missing objects, authentication: a person must act.
			return ClassCritical
		}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.As(err, &netErr), pgconn.SafeToRetry(err), pgconn.Timeout(err):
		return ClassRetryable
	default:
		var connErr *stream.ConnError
		var ce *pgconn.ConnectError
		var ke *kerr.Error
		switch {
		case errors.As(err, &connErr), errors.As(err, &ce):
			return ClassRetryable // a connection broke without a server error
		case errors.As(err, &ke):
			if ke.Retriable {
				return ClassRetryable
			}
			return ClassCritical
		default:
			// Anything unforeseen stops the pipeline with its message rather
			// than looping on it silently.
			return ClassCritical
		}
	}
}

// IsNotKafka reports whether err is a reply that is not the Kafka
// protocol: a server that is not a Kafka broker (Postgres, an HTTP server)
// listens at an address of kafka.brokers. franz-go reads the reply's first
// four bytes as a response size and refuses it as "invalid large response
// size" or "invalid negative response size" (kgo broker.go parseReadSize;
// its error is not exported, so its text is matched).
func IsNotKafka(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "invalid large response size") || strings.Contains(msg, "invalid negative response size")
}

// IsRetryable reports whether Classify says ClassRetryable.
func IsRetryable(err error) bool { return Classify(err) == ClassRetryable }

// TableFault decides, in one place, whether err is a table's own: its
// records cannot be written until a person acts, and retrying cannot help.
// The main worker parks such a table (errored, waiting for `mooncdc
// resnapshot`) and goes on with the others; a copy that fails with one is
// not retried. They are: a schema the registry refuses or that is not
// valid Avro, a format.message_key_columns entry the table cannot follow,
// a value that cannot be encoded, a record above kafka.max_record_bytes, an
// outbox event for a partition its topic lacks, and an update of the
// outbox table under table_op_invalid_behavior fatal.
// Each of those says so where it is made (a TableLocal method), except
// schema's ValueError.
func TableFault(err error) bool {
	var local interface{ TableLocal() }
	return errors.As(err, &local) || errors.As(err, new(*schema.ValueError))
}

// Retry runs fn until it succeeds, fails with an error that is not
// retryable, or ctx is done. The first failure is logged at warn, later
// ones at debug: one log line per change of state.
func Retry(ctx context.Context, log *zap.Logger, what string, fn func() error) error {
	bo := NewBackoff(250*time.Millisecond, 30*time.Second)
	failing := false
	for {
		err := fn()
		if err == nil {
			if failing {
				log.Info(what + ": succeeded after retries")
			}
			return nil
		}
		if Classify(err) != ClassRetryable {
			return err
		}
		if !failing {
			log.Warn(what+": failed, retrying with backoff", zap.Error(err))
			failing = true
		} else {
			log.Debug(what+": failed again", zap.Error(err))
		}
		if !Sleep(ctx, bo.Next()) {
			return errors.Join(ctx.Err(), err)
		}
	}
}

// Backoff is capped exponential backoff with full jitter on the upper half.
type Backoff struct {
	min, max, cur time.Duration
}

func NewBackoff(min, max time.Duration) *Backoff { return &Backoff{min: min, max: max} }

func (b *Backoff) Next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else if b.cur *= 2; b.cur > b.max {
		b.cur = b.max
	}
	return b.cur/2 + time.Duration(rand.Int64N(int64(b.cur/2)+1))
}

// Sleep waits d, or until ctx is done; it reports whether d passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
