package connector

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/stream"
	"github.com/mooncdc/mooncdc/schema"
)

type errClass int

const (
	classCritical  errClass = iota // stop with a clear message
	classRetryable                 // reconnect with backoff, resume from the durable LSN
	classUnsafe                    // the source or slot is not the one the offsets describe
)

// criticalError marks an error that must stop the pipeline.
type criticalError struct{ err error }

func (e *criticalError) Error() string { return e.err.Error() }
func (e *criticalError) Unwrap() error { return e.err }

// Fatal marks the error as one that must stop the pipeline.
func (e *criticalError) Fatal() {}

// classify decides, in one place, what an error means for the pipeline.
// Errors say what they are where they are made, by a marker method
// (UnsafeResume, Fatal, Retryable), so that classify needs no package's
// error types beyond the stream's and the drivers'.
func classify(err error) errClass {
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
		return classRetryable
	case errors.As(err, &unsafe):
		return classUnsafe
	case IsNotKafka(err):
		return classCritical // the address is wrong: no retry makes it Kafka
	case errors.As(err, &fatal):
		// criticalError, a ConfigError, a FencedError, and a RecordError
		// (a value that cannot be encoded; retrying would crash-loop). The
		// RecordError was a case of its own after TxnAbortedError; the order
		// cannot matter, since a TxnAbortedError wraps only what the
		// transactional producer returned (txnError, sink_eos.go), and a
		// record that failed to encode is never produced.
		return classCritical
	case config.CertificateError(err):
		// A server certificate that does not verify stays so until a
		// person changes the CA setting or the certificate.
		return classCritical
	case errors.As(err, &retryable): // a TxnAbortedError
		return classRetryable // aborted; the next session replays from the last commit
	case errors.As(err, &proto):
		// The stream's bytes made no sense; reading them again will not help.
		return classCritical
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed),
		errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, kerr.PolicyViolation),
		errors.Is(err, kerr.InvalidReplicationFactor), errors.Is(err, kerr.InvalidTopicException):
		return classCritical
	case errors.As(err, &pgErr):
		switch {
		case pgErr.Code == "55006": // object_in_use: the slot is still held by an old session
			return classRetryable
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // shutdown, crash, cannot connect now
			return classRetryable
		case pgErr.Code == "53300": // too_many_connections
			return classRetryable
		case len(pgErr.Code) == 2+3 && pgErr.Code[:2] == "08": // connection exception
			return classRetryable
		default:
			// Privileges, missing objects, authentication: a person must act.
			return classCritical
		}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.As(err, &netErr), pgconn.SafeToRetry(err), pgconn.Timeout(err):
		return classRetryable
	default:
		var connErr *stream.ConnError
		var ce *pgconn.ConnectError
		var ke *kerr.Error
		switch {
		case errors.As(err, &connErr), errors.As(err, &ce):
			return classRetryable // a connection broke without a server error
		case errors.As(err, &ke):
			if ke.Retriable {
				return classRetryable
			}
			return classCritical
		default:
			// Anything unforeseen stops the pipeline with its message rather
			// than looping on it silently.
			return classCritical
		}
	}
}

func isRetryable(err error) bool { return classify(err) == classRetryable }

// tableFault decides, in one place, whether err is a table's own: its
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
func tableFault(err error) bool {
	var local interface{ TableLocal() }
	return errors.As(err, &local) || errors.As(err, new(*schema.ValueError))
}

// retry runs fn until it succeeds, fails with an error that is not
// retryable, or ctx is done. The first failure is logged at warn, later
// ones at debug: one log line per change of state.
func retry(ctx context.Context, log *zap.Logger, what string, fn func() error) error {
	bo := newBackoff(250*time.Millisecond, 30*time.Second)
	failing := false
	for {
		err := fn()
		if err == nil {
			if failing {
				log.Info(what + ": succeeded after retries")
			}
			return nil
		}
		if classify(err) != classRetryable {
			return err
		}
		if !failing {
			log.Warn(what+": failed, retrying with backoff", zap.Error(err))
			failing = true
		} else {
			log.Debug(what+": failed again", zap.Error(err))
		}
		if !sleepCtx(ctx, bo.next()) {
			return errors.Join(ctx.Err(), err)
		}
	}
}

// backoff is capped exponential backoff with full jitter on the upper half.
type backoff struct {
	min, max, cur time.Duration
}

func newBackoff(min, max time.Duration) *backoff { return &backoff{min: min, max: max} }

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else if b.cur *= 2; b.cur > b.max {
		b.cur = b.max
	}
	return b.cur/2 + time.Duration(rand.Int64N(int64(b.cur/2)+1))
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
