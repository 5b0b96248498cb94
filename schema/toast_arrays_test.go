package schema

import (
	"reflect"
	"testing"
)

// TestUnchangedToastedArraysAsDebezium: an unchanged TOASTed date[],
// bytea[] or uuid[] value carries Debezium's placeholder for that array
// type, in JSON and Avro, instead of failing the row (which parked the
// table): date[] the placeholder's bytes as numbers, bytea[] a one-bytes
// list, uuid[] the placeholder's name-based UUID
// (UnchangedToastedReplicationMessageColumn.java:70-107,
// UnchangedToastedPlaceholder.java:38-55; expected by
// RecordsStreamProducerIT.java:1840, :1888, :2132 and
// DecoderDifferences.java:20-22 at v3.6.1.Final).
func TestUnchangedToastedArraysAsDebezium(t *testing.T) {
	var phBytes []any
	for _, b := range []byte(DefaultUnavailableValue) {
		phBytes = append(phBytes, float64(b))
	}
	for _, tc := range []struct {
		name string
		oid  uint32
		want any
	}{
		{"date[]", 1182, phBytes},
		{"bytea[]", 1001, []any{"X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ=="}},
		{"uuid[]", 2951, []any{"b68a35a7-17ad-35b3-af2a-ae46edb4545a"}},
	} {
		rel := &Relation{OID: 1, Schema: "public", Table: "t", ReplicaIdentity: 'd',
			Columns: []Column{{Name: "c", TypeOID: tc.oid, TypeMod: -1}}}
		r := encodeRow(t, testJSONConfig, rel, Tuple{toast})
		if !reflect.DeepEqual(r.plain["c"], tc.want) || !reflect.DeepEqual(r.payload["c"], tc.want) {
			t.Errorf("%s: JSON %v / %v, want %v", tc.name, r.plain["c"], r.payload["c"], tc.want)
		}
		got, _ := unwrapAvro(r.avro["c"]).([]any)
		if len(got) == 0 {
			t.Errorf("%s: Avro %#v, want the placeholder", tc.name, r.avro["c"])
			continue
		}
		switch tc.name {
		case "date[]":
			if len(got) != len(phBytes) {
				t.Errorf("%s: Avro %d items, want %d", tc.name, len(got), len(phBytes))
			}
		case "bytea[]":
			if b, _ := unwrapAvro(got[0]).([]byte); string(b) != DefaultUnavailableValue {
				t.Errorf("%s: Avro %#v", tc.name, got)
			}
		case "uuid[]":
			if s, _ := unwrapAvro(got[0]).(string); s != "b68a35a7-17ad-35b3-af2a-ae46edb4545a" {
				t.Errorf("%s: Avro %#v", tc.name, got)
			}
		}
	}
}
