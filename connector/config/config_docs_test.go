package config

import (
	"strings"
	"testing"
	"time"
)

// TestEveryConfigKeyIsDocumented keeps configDocs, the source of the
// configuration reference, in step with Config: a new key needs its
// description, a removed one takes its description along.
func TestEveryConfigKeyIsDocumented(t *testing.T) {
	missing, stale := undocumentedKeys()
	for _, k := range missing {
		t.Errorf("config key %s has no entry in configDocs (config_docs.go): say what it does there", k)
	}
	for _, k := range stale {
		t.Errorf("configDocs has an entry for %s, which is no config key", k)
	}
	for _, d := range ConfigReference() {
		if strings.TrimSpace(d.Doc) == "" || d.Default == "" {
			t.Errorf("%s: empty description or default", d.Path)
		}
	}
}

func TestConfigReferenceDefaults(t *testing.T) {
	want := map[string]string{
		"kafka.transaction_timeout":            "`15m`",
		"kafka.transaction_max_interval":       "`100ms`",
		"snapshot.discovery_interval":          "`10s`",
		"kafka.delivery":                       "`at-least-once`",
		"kafka.topic_replication_factor":       "`-1`",
		"format.skipped_operations":            "`[t]`",
		"format.message_key_columns":           "`{}`",
		"postgres.slot":                        "`mooncdc_<name>`",
		"postgres.url":                         "empty",
		"format.schema_registry.auto_register": "`true`",
	}
	got := map[string]ConfigKeyDoc{}
	for _, d := range ConfigReference() {
		got[d.Path] = d
	}
	for k, w := range want {
		if got[k].Default != w {
			t.Errorf("%s: default %q, want %q", k, got[k].Default, w)
		}
	}
	if f := got["postgres.tables"].EnvForm; f != "comma-separated" {
		t.Errorf("postgres.tables env form %q", f)
	}
	if f := got["format.column_mask"].EnvForm; !strings.HasPrefix(f, "YAML flow") {
		t.Errorf("format.column_mask env form %q", f)
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		10 * time.Second: "10s", 15 * time.Minute: "15m", time.Hour: "1h", 90 * time.Second: "1m30s",
		100 * time.Millisecond: "100ms", 2*time.Hour + 30*time.Minute: "2h30m",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
