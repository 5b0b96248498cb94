package main

import (
	"context"
	"testing"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// TestCheckRegistryAsksForTheFormatsSchemaTypes: mooncdc check asks the
// Schema Registry whenever a format registers schemas (protobuf and
// json_schema too, not only avro) and names the schema types the formats
// need; none without such a format.
func TestCheckRegistryAsksForTheFormatsSchemaTypes(t *testing.T) {
	reg := srtest.New(t)
	for _, c := range []struct{ key, value, want string }{
		{config.FormatJSON, config.FormatProtobuf, "reachable, supports PROTOBUF"},
		{config.FormatJSONSchema, config.FormatAvro, "reachable, supports JSON, AVRO"},
		{config.FormatJSON, config.FormatJSON, ""},
	} {
		cfg := config.DefaultConfig()
		cfg.Format.Key, cfg.Format.Value = c.key, c.value
		cfg.Format.SchemaRegistry.URL = reg.URL()
		lines := checkRegistry(context.Background(), cfg)
		switch {
		case c.want == "" && len(lines) != 0:
			t.Errorf("%s/%s: %v, want no registry check", c.key, c.value, lines)
		case c.want != "" && (len(lines) != 1 || lines[0].verdict != checkPassed || lines[0].text != c.want):
			t.Errorf("%s/%s: %v, want ✓ %s", c.key, c.value, lines, c.want)
		}
	}
}
