package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestFlatEnvelopeKeysLoadFromFileAndEnv: format.envelope and
// format.flat.* are config keys (file and MOONCDC_FORMAT_FLAT_*), as
// `mooncdc import-debezium` writes them for ExtractNewRecordState.
func TestFlatEnvelopeKeysLoadFromFileAndEnv(t *testing.T) {
	path := writeFile(t, "format:\n  envelope: flat\n  flat:\n    delete_handling: rewrite\n"+
		"    add_fields: [op, table, lsn, source.ts_ms]\n    add_headers: [op]\n    add_fields_prefix: \"\"\n")
	cfg, err := LoadConfig(path, []string{"MOONCDC_FORMAT_FLAT_ADD_HEADERS_PREFIX=h."})
	if err != nil {
		t.Fatal(err)
	}
	want := FlatConfig{DeleteHandling: "rewrite", AddFields: []string{"op", "table", "lsn", "source.ts_ms"}, AddHeaders: []string{"op"},
		AddFieldsPrefix: "", AddHeadersPrefix: "h."}
	if cfg.Format.Envelope != EnvelopeFlat || !reflect.DeepEqual(cfg.Format.Flat, want) {
		t.Fatalf("envelope %q flat %+v, want %+v", cfg.Format.Envelope, cfg.Format.Flat, want)
	}
	cfg.Name, cfg.Postgres.URL, cfg.Postgres.Tables = "shop", "postgres://u@h/db", []string{"public.t"}
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	f, _ := cfg.Format.SchemaFlat()
	if names := []string{f.Fields[0].Name, f.Fields[3].Name, f.Headers[0].Name}; !reflect.DeepEqual(names, []string{"op", "source_ts_ms", "h.op"}) {
		t.Errorf("names %v", names)
	}
}

// TestFlatEnvelopeRefusals: an unknown envelope, an unknown mode or field names the key and the choices, format.flat
// without format.envelope flat is refused, and source.snapshot as an Avro
// field is refused (not built yet).
func TestFlatEnvelopeRefusals(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"unknown envelope", func(c *Config) { c.Format.Envelope = "unwrapped" }, `format.envelope: "unwrapped" is not one of debezium, flat, outbox`},
		{"mode", func(c *Config) { c.Format.Envelope, c.Format.Flat.DeleteHandling = EnvelopeFlat, "none" }, `format.flat.delete_handling: "none" is not one of`},
		{"field", func(c *Config) { c.Format.Envelope, c.Format.Flat.AddFields = EnvelopeFlat, []string{"source.tsms"} }, `format.flat.add_fields: "source.tsms" is not a field`},
		{"header", func(c *Config) { c.Format.Envelope, c.Format.Flat.AddHeaders = EnvelopeFlat, []string{"after"} }, `format.flat.add_headers: "after" is not a field`},
		{"flat without envelope", func(c *Config) { c.Format.Flat.AddFields = []string{"op"} }, "format.flat: set, but format.envelope is debezium"},
		{"avro snapshot field", func(c *Config) {
			c.Format.Envelope, c.Format.Flat.AddFields = EnvelopeFlat, []string{"source.snapshot"}
			c.Format.Value, c.Format.SchemaRegistry.URL = FormatAvro, "http://localhost:8081"
		}, "source.snapshot with format.value avro is not built yet"},
	} {
		c := validConfig()
		tt.set(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
