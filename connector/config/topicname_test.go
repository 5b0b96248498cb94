package config

import (
	"strings"
	"testing"
)

// TestTopicNamesAreSanitizedAsDebeziumDoes: the expectations follow
// AbstractTopicNamingStrategy.sanitizedTopicName
// (debezium-connector-common/src/main/java/io/debezium/schema/AbstractTopicNamingStrategy.java:155-200,
// v3.6.1.Final): per Java char, so per UTF-16 code unit.
func TestTopicNamesAreSanitizedAsDebeziumDoes(t *testing.T) {
	for _, tc := range []struct {
		prefix, schema, table, want string
	}{
		{"shop", "public", "orders", "shop.public.orders"},
		{"shop", "public", "Orders_2-x", "shop.public.Orders_2-x"},
		// 'é' is one UTF-16 unit: one '_' (per byte it would be two).
		{"shop", "public", "Ordér", "shop.public.Ord_r"},
		{"shop", "public", "日本", "shop.public.__"},
		// Outside the BMP: a surrogate pair, two Java chars.
		{"shop", "public", "t😀", "shop.public.t__"},
		// Debezium's own quoted test table (postgres_create_tables.ddl:74):
		// the quote and the spaces become '_', the dots stay.
		{"shop", `Quoted_" . Schema`, `Quoted_" . Table`, "shop.Quoted___._Schema.Quoted___._Table"},
		{"shop", "my schema", "a b", "shop.my_schema.a_b"},
	} {
		if got := TopicName(tc.prefix, tc.schema, tc.table); got != tc.want {
			t.Errorf("TopicName(%q, %q, %q) = %q, want %q", tc.prefix, tc.schema, tc.table, got, tc.want)
		}
	}
	// AbstractTopicNamingStrategy.java:171-180: cut to MAX_NAME_LENGTH
	// (249); "." and ".." are replaced.
	if got := sanitizeTopic(strings.Repeat("é", 300)); got != strings.Repeat("_", 249) {
		t.Errorf("long name: got %d characters %q…", len(got), got[:10])
	}
	if got := sanitizeTopic("."); got != "_" {
		t.Errorf(`sanitizeTopic(".") = %q, want "_"`, got)
	}
	if got := sanitizeTopic(".."); got != "__" {
		t.Errorf(`sanitizeTopic("..") = %q, want "__"`, got)
	}
	if got := sanitizeTopic("ok.name"); got != "ok.name" {
		t.Errorf("a clean name changed: %q", got)
	}
}
