package config

import (
	"strings"
	"testing"
)

// TestCloudEventsFormatIsAValueFormatOfTheEnvelope: format.value
// cloudevents loads and validates with Debezium's envelope; as a key
// format, or with the flat or outbox envelope (whose values are no change
// envelope, which Debezium's converter writes as null), it is refused
// with the fix.
func TestCloudEventsFormatIsAValueFormatOfTheEnvelope(t *testing.T) {
	path := writeFile(t, "format:\n  value: cloudevents\n  json_schemas: true\n")
	cfg, err := LoadConfig(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Name, cfg.Postgres.URL, cfg.Postgres.Tables = "shop", "postgres://u@h/db", []string{"public.t"}
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil || cfg.Format.Value != FormatCloudEvents {
		t.Fatalf("format.value %q: %v", cfg.Format.Value, err)
	}
	for _, tt := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"key", func(c *Config) { c.Format.Key = FormatCloudEvents }, "format.key: cloudevents is a value format"},
		{"flat", func(c *Config) { c.Format.Value, c.Format.Envelope = FormatCloudEvents, EnvelopeFlat }, "with format.envelope flat every value would be null"},
		{"unknown", func(c *Config) { c.Format.Value = "thrift" }, `format.value: "thrift" is not one of json, avro, protobuf, json_schema, cloudevents (value only)`},
	} {
		c := validConfig()
		tt.set(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
