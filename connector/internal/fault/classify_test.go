package fault_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/connector/stream"
)

func TestClassifyDecidesRetryInOnePlace(t *testing.T) {
	pg := func(code string) error { return &pgconn.PgError{Code: code, Message: "x"} }
	conn := func(err error) error { return &stream.ConnError{Op: "receive", Err: err} }
	cases := []struct {
		name string
		err  error
		want fault.Class
	}{
		{"connection reset", conn(io.ErrUnexpectedEOF), fault.ClassRetryable},
		{"dial refused", &net.OpError{Op: "dial", Err: errors.New("refused")}, fault.ClassRetryable},
		{"slot still active", conn(pg("55006")), fault.ClassRetryable},
		{"admin shutdown", conn(pg("57P01")), fault.ClassRetryable},
		{"starting up", pg("57P03"), fault.ClassRetryable},
		{"too many connections", pg("53300"), fault.ClassRetryable},
		{"connection exception", pg("08006"), fault.ClassRetryable},
		{"deadline", fmt.Errorf("load: %w", context.DeadlineExceeded), fault.ClassRetryable},
		{"kafka retriable", fmt.Errorf("produce: %w", kerr.NotLeaderForPartition), fault.ClassRetryable},
		{"kafka auth", fmt.Errorf("produce: %w", kerr.TopicAuthorizationFailed), fault.ClassCritical},
		{"kafka too large", fmt.Errorf("produce: %w", kerr.MessageTooLarge), fault.ClassCritical},
		{"no privilege", conn(pg("42501")), fault.ClassCritical},
		{"slot missing", conn(pg("42704")), fault.ClassCritical},
		{"bad password", pg("28P01"), fault.ClassCritical},
		{"protocol", &stream.ProtocolError{Msg: "bad"}, fault.ClassCritical},
		{"encode", &record.RecordError{Topic: "t", Err: errors.New("bad value")}, fault.ClassCritical},
		{"unsafe", &connector.UnsafeResumeError{Reason: "x"}, fault.ClassUnsafe},
		{"config", &config.ConfigError{Err: errors.New("x")}, fault.ClassCritical},
		{"critical", &fault.CriticalError{Err: errors.New("x")}, fault.ClassCritical},
		{"unknown", errors.New("something new"), fault.ClassCritical},
	}
	for _, tc := range cases {
		if got := fault.Classify(tc.err); got != tc.want {
			t.Errorf("%s: classify(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}
