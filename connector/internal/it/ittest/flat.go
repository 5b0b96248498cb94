package ittest

import (
	"encoding/json"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/config"
)

// FlatConfig is a pipeline on public.items in the flat envelope with
// mode, adding op, table, lsn and source.ts_ms as fields and op as a
// header, as import-debezium maps the documentation's unwrap example.
func FlatConfig(e *Env, name, mode string) config.Config {
	cfg := e.Config(name, "public.items")
	cfg.Heartbeat.Records = false
	cfg.Format.Envelope = config.EnvelopeFlat
	cfg.Format.Flat.DeleteHandling = mode
	cfg.Format.Flat.AddFields = []string{"op", "table", "lsn", "source.ts_ms"}
	cfg.Format.Flat.AddHeaders = []string{"op"}
	return cfg
}

// Header returns rec's header key: its value and whether it is there
// (a null value reads as "<null>").
func Header(rec *kgo.Record, key string) (string, bool) {
	for _, h := range rec.Headers {
		if h.Key == key {
			if h.Value == nil {
				return "<null>", true
			}
			return string(h.Value), true
		}
	}
	return "", false
}

// FlatRow decodes a flat JSON value (after JsonConverter's envelope, if
// any, is checked and removed).
func FlatRow(t *testing.T, rec *kgo.Record) map[string]any {
	t.Helper()
	rec = UnwrapConnect(t, rec)
	if rec.Value == nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(rec.Value, &m); err != nil {
		t.Fatalf("value %q: %v", rec.Value, err)
	}
	return m
}
