package config

import (
	"strings"
	"testing"
)

// TestOutboxEnvelopeKeysLoadFromFileAndEnv: format.envelope outbox and
// format.outbox.* are config keys (file and MOONCDC_FORMAT_OUTBOX_*), with
// Debezium's defaults for what is not set (EventRouterConfigDefinition.java:195-297).
func TestOutboxEnvelopeKeysLoadFromFileAndEnv(t *testing.T) {
	path := writeFile(t, "format:\n  envelope: outbox\n  outbox:\n    table: public.outbox\n"+
		"    table_fields_additional_placement: [\"type:header\", \"tenant:envelope:org\"]\n    table_expand_json_payload: true\n")
	cfg, err := LoadConfig(path, []string{"MOONCDC_FORMAT_OUTBOX_MESSAGE_PREFIX=outbox", "MOONCDC_FORMAT_OUTBOX_TOPIC=events.${routedByValue}"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Name, cfg.Postgres.URL, cfg.Postgres.Tables = "shop", "postgres://u@h/db", []string{"public.outbox"}
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	o, err := cfg.Format.SchemaOutbox()
	if err != nil || o == nil {
		t.Fatal(o, err)
	}
	if o.Table != "outbox" || o.RouteBy != "aggregatetype" || o.KeyField != "aggregateid" || o.IDField != "id" || o.PayloadField != "payload" ||
		!o.Expand || o.MessagePrefix != "outbox" || o.Topic("Order") != "events.Order" || len(o.Fields) != 2 || o.Fields[1].Alias != "org" {
		t.Fatalf("outbox %+v", o)
	}
}

// TestOutboxEnvelopeRefusals: each refusal names the key and the fix.
func TestOutboxEnvelopeRefusals(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"no table", func(c *Config) { c.Format.Envelope = EnvelopeOutbox }, "format.outbox.table: required"},
		{"update behaviour", func(c *Config) {
			c.Format.Envelope, c.Format.Outbox.Table, c.Format.Outbox.TableOpInvalidBehavior = EnvelopeOutbox, "public.outbox", "skip"
		}, "format.outbox.table_op_invalid_behavior"},
		{"placement", func(c *Config) {
			c.Format.Envelope, c.Format.Outbox.Table, c.Format.Outbox.TableFieldsAdditionalPlacement = EnvelopeOutbox, "public.outbox", []string{"p:shard"}
		}, `"shard" is not header, envelope or partition`},
		{"heartbeat prefix", func(c *Config) {
			c.Format.Envelope, c.Format.Outbox.Table, c.Format.Outbox.MessagePrefix = EnvelopeOutbox, "public.outbox", HeartbeatMessagePrefix
		}, "is mooncdc's own message prefix"},
		{"not captured", func(c *Config) {
			c.Format.Envelope, c.Format.Outbox.Table, c.Postgres.TablesExclude = EnvelopeOutbox, "public.outbox", []string{"public.outbox"}
		}, "format.outbox.table: public.outbox is not captured"},
		{"outbox without envelope", func(c *Config) { c.Format.Outbox.Table = "public.outbox" }, "format.outbox: set, but format.envelope is debezium"},
	} {
		c := validConfig()
		tt.set(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
