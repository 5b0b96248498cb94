package main

import (
	"runtime/debug"
	"testing"

	"github.com/mooncdc/mooncdc/connector/config"
)

// TestRunSetsTheMemoryLimitOfTheInflightBound protects the RSS bound
// (kafka.max_inflight_bytes + 64 MiB): run sets the Go memory limit from
// the bound, leaves an operator's GOMEMLIMIT alone, sets none for the
// embedded Kafka, and restores the previous limit.
func TestRunSetsTheMemoryLimitOfTheInflightBound(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	cfg := config.DefaultConfig()
	cfg.Kafka.Brokers = []string{"kafka:9092"}
	cfg.Kafka.MaxInflightBytes = 32 << 20
	for _, tc := range []struct {
		name    string
		brokers []string
		environ []string
		want    int64
	}{
		{"bound", []string{"kafka:9092"}, nil, 32<<20 + 64<<20 - 32<<20},
		{"GOMEMLIMIT set", []string{"kafka:9092"}, []string{"GOMEMLIMIT=1GiB"}, before},
		{"embedded Kafka", nil, nil, before},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.Kafka.Brokers = tc.brokers
			restore := setMemoryLimit(c, tc.environ)
			if got := debug.SetMemoryLimit(-1); got != tc.want {
				t.Errorf("memory limit %d, want %d", got, tc.want)
			}
			restore()
			if got := debug.SetMemoryLimit(-1); got != before {
				t.Errorf("memory limit after restore %d, want %d", got, before)
			}
		})
	}
}
