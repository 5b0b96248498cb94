package connector

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/schema"
)

// Process exit codes, a public contract of the mooncdc command.
const (
	ExitOK           = 0
	ExitRuntime      = 1
	ExitConfig       = 2
	ExitUnsafeResume = 3
	ExitFenced       = 4
)

// UnsafeResumeError reports that the offsets in Kafka do not describe the
// Postgres source or slot that mooncdc is connected to (pgsource).
type UnsafeResumeError = pgsource.UnsafeResumeError

// ShutdownTimeoutError is a clean stop that did not finish within
// shutdown_timeout, most often because Kafka did not acknowledge what was
// sent. Nothing unacknowledged was confirmed to Postgres: the next start
// resumes at Durable and sends those records again.
type ShutdownTimeoutError struct {
	Timeout time.Duration
	Unacked int64
	Durable schema.LSN
}

func (e *ShutdownTimeoutError) Error() string {
	return fmt.Sprintf("the clean stop did not finish within shutdown_timeout (%s): %d records were not acknowledged by Kafka; "+
		"nothing after the durable LSN %s was confirmed to Postgres, so the next start sends them again "+
		"(is Kafka reachable? raise shutdown_timeout to wait longer)", e.Timeout, e.Unacked, e.Durable)
}

// notKafkaError is the configuration error for IsNotKafka.
func notKafkaError(brokers []string, err error) error {
	return &config.ConfigError{Err: fmt.Errorf("kafka.brokers %s: not a Kafka broker: a server there answered with something that is not the Kafka protocol "+
		"(another service on that port, such as Postgres or an HTTP server); check kafka.brokers (host:port of the brokers' listener) (%v)",
		strings.Join(brokers, ","), err)}
}

// ExitCode maps an error returned by Run (or config loading) to the process
// exit code.
func ExitCode(err error) int {
	var ce *config.ConfigError
	var ue *UnsafeResumeError
	var fe *delivery.FencedError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ce):
		return ExitConfig
	case errors.As(err, &ue):
		return ExitUnsafeResume
	case errors.As(err, &fe):
		return ExitFenced
	default:
		return ExitRuntime
	}
}

// IsNotKafka reports whether err is a reply that is not the Kafka protocol
// (a server that is not a Kafka broker listens at an address of
// kafka.brokers): fault.IsNotKafka, for the command's check.
func IsNotKafka(err error) bool { return fault.IsNotKafka(err) }
