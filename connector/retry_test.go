package connector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/stream"
)

func TestClassifyDecidesRetryInOnePlace(t *testing.T) {
	pg := func(code string) error { return &pgconn.PgError{Code: code, Message: "x"} }
	conn := func(err error) error { return &stream.ConnError{Op: "receive", Err: err} }
	cases := []struct {
		name string
		err  error
		want errClass
	}{
		{"connection reset", conn(io.ErrUnexpectedEOF), classRetryable},
		{"dial refused", &net.OpError{Op: "dial", Err: errors.New("refused")}, classRetryable},
		{"slot still active", conn(pg("55006")), classRetryable},
		{"admin shutdown", conn(pg("57P01")), classRetryable},
		{"starting up", pg("57P03"), classRetryable},
		{"too many connections", pg("53300"), classRetryable},
		{"connection exception", pg("08006"), classRetryable},
		{"deadline", fmt.Errorf("load: %w", context.DeadlineExceeded), classRetryable},
		{"kafka retriable", fmt.Errorf("produce: %w", kerr.NotLeaderForPartition), classRetryable},
		{"kafka auth", fmt.Errorf("produce: %w", kerr.TopicAuthorizationFailed), classCritical},
		{"kafka too large", fmt.Errorf("produce: %w", kerr.MessageTooLarge), classCritical},
		{"no privilege", conn(pg("42501")), classCritical},
		{"slot missing", conn(pg("42704")), classCritical},
		{"bad password", pg("28P01"), classCritical},
		{"protocol", &stream.ProtocolError{Msg: "bad"}, classCritical},
		{"encode", &RecordError{Topic: "t", Err: errors.New("bad value")}, classCritical},
		{"unsafe", &UnsafeResumeError{Reason: "x"}, classUnsafe},
		{"config", &config.ConfigError{Err: errors.New("x")}, classCritical},
		{"critical", &criticalError{errors.New("x")}, classCritical},
		{"unknown", errors.New("something new"), classCritical},
	}
	for _, tc := range cases {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("%s: classify(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestServerVersionBelow14IsRefusedWithTheCause(t *testing.T) {
	for _, tt := range []struct {
		num  int
		want string
	}{
		{130012, "PostgreSQL 13.12 is too old"},
		{100023, "PostgreSQL 10.23 is too old"},
		{140000, ""},
		{150018, ""},
	} {
		err := checkServerVersion(tt.num)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%d: %v", tt.num, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || classify(err) != classCritical):
			t.Errorf("%d: want a critical error containing %q, got %v", tt.num, tt.want, err)
		}
	}
}
