package main

import (
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mooncdc/mooncdc/connector/group"
)

// TestRunnerIsAStandbyOnlyWithHAAndBrokers: ha.enabled (here from its
// MOONCDC_HA_ENABLED variable) makes run a standby member; with the embedded
// Kafka there is no group, so run runs the pipeline as without ha, and says
// so.
func TestRunnerIsAStandbyOnlyWithHAAndBrokers(t *testing.T) {
	for _, tt := range []struct {
		name    string
		environ []string
		standby bool
		warns   bool
	}{
		{"without ha", []string{"MOONCDC_KAFKA_BROKERS=k:9092"}, false, false},
		{"ha with brokers", []string{"MOONCDC_KAFKA_BROKERS=k:9092", "MOONCDC_HA_ENABLED=true"}, true, false},
		{"ha with the embedded Kafka", []string{"MOONCDC_HA_ENABLED=true"}, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadRunConfig([]string{"--name", "r", "--postgres-url", "postgres://u@h/db"}, tt.environ)
			if err != nil {
				t.Fatal(err)
			}
			core, logs := observer.New(zap.WarnLevel)
			r, err := newRunner(cfg, zap.New(core))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := r.(*group.Standby); ok != tt.standby {
				t.Errorf("runner %T, want a standby member: %v", r, tt.standby)
			}
			warned := logs.FilterMessageSnippet("ha.enabled is ignored").Len() > 0
			if warned != tt.warns {
				t.Errorf("warned %v, want %v: %v", warned, tt.warns, logs.All())
			}
		})
	}
	if !strings.Contains(configFlagsUsage(), "MOONCDC_HA_SESSION_TIMEOUT") {
		t.Error("help run does not list MOONCDC_HA_SESSION_TIMEOUT")
	}
}
