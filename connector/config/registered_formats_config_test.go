package config

import (
	"strings"
	"testing"
)

// TestProtobufAndJSONSchemaFormatsNeedTheRegistry: format.key and
// format.value protobuf and json_schema load with a Schema Registry, as
// avro does; without one, or with the outbox envelope (not written
// through the Connect view yet), they are refused with the fix.
func TestProtobufAndJSONSchemaFormatsNeedTheRegistry(t *testing.T) {
	path := writeFile(t, "format:\n  key: protobuf\n  value: json_schema\n  schema_registry:\n    url: http://localhost:8081\n")
	cfg, err := LoadConfig(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Name, cfg.Postgres.URL, cfg.Postgres.Tables = "shop", "postgres://u@h/db", []string{"public.t"}
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil || cfg.Format.Key != FormatProtobuf || cfg.Format.Value != FormatJSONSchema {
		t.Fatalf("format %q/%q: %v", cfg.Format.Key, cfg.Format.Value, err)
	}
	if !cfg.Format.UsesRegistry() {
		t.Error("UsesRegistry: false for protobuf/json_schema")
	}
	plain := validConfig()
	if plain.Format.UsesRegistry() {
		t.Error("UsesRegistry: true for json/json")
	}
	for _, tt := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"protobuf without registry", func(c *Config) { c.Format.Value = FormatProtobuf },
			"format.schema_registry.url: required when format.key or format.value is avro, protobuf or json_schema"},
		{"json_schema key without registry", func(c *Config) { c.Format.Key = FormatJSONSchema },
			"format.schema_registry.url: required"},
		{"outbox", func(c *Config) {
			c.Format.Value, c.Format.Envelope = FormatProtobuf, EnvelopeOutbox
			c.Format.SchemaRegistry.URL = "http://localhost:8081"
		}, "format.value: protobuf is not supported with format.envelope outbox yet"},
	} {
		c := validConfig()
		tt.set(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
