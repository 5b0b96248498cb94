package record

import (
	"encoding/binary"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/notify"
)

// The record SinkNotificationChannel makes (SinkNotificationChannel.java:92-98
// at Debezium v3.6.1.Final): key {id}, value {id, type, aggregate_type,
// additional_data, timestamp}, with the schemas of SchemaFactory.java:317-335
// (names io.debezium.connector.common.NotificationKey / .Notification,
// version 1; additional_data an optional map of strings), rendered by the
// configured converter.
func TestNotificationRecordsAsDebeziumsSinkChannelWritesThem(t *testing.T) {
	n := notify.Notification{ID: "12345", AggregateType: "Incremental Snapshot", Type: "TABLE_SCAN_COMPLETED",
		AdditionalData: map[string]string{"connector_name": "shop", "data_collections": "public.a", "scanned_collection": "public.a",
			"total_rows_scanned": "100", "status": "SUCCEEDED"}, Timestamp: 1700000000123}
	wantKey := map[string]any{"id": "12345"}
	wantValue := map[string]any{"id": "12345", "type": "TABLE_SCAN_COMPLETED", "aggregate_type": "Incremental Snapshot",
		"additional_data": map[string]any{"connector_name": "shop", "data_collections": "public.a", "scanned_collection": "public.a",
			"total_rows_scanned": "100", "status": "SUCCEEDED"},
		"timestamp": float64(1700000000123)}
	str := func(f string) map[string]any { return map[string]any{"type": "string", "optional": false, "field": f} }
	wantKeySchema := map[string]any{"type": "struct", "optional": false, "name": "io.debezium.connector.common.NotificationKey",
		"version": float64(1), "fields": []any{str("id")}}
	wantValueSchema := map[string]any{"type": "struct", "optional": false, "name": "io.debezium.connector.common.Notification",
		"version": float64(1), "fields": []any{str("id"), str("type"), str("aggregate_type"),
			map[string]any{"type": "map", "keys": map[string]any{"type": "string", "optional": false},
				"values": map[string]any{"type": "string", "optional": false}, "optional": true, "field": "additional_data"},
			map[string]any{"type": "int64", "optional": false, "field": "timestamp"}}}

	decode := func(t *testing.T, b []byte) any {
		t.Helper()
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return v
	}
	t.Run("plain JSON", func(t *testing.T) {
		f := &NotificationFormat{keyFormat: config.FormatJSON, valueFmt: config.FormatJSON}
		k, _ := f.AppendKey(nil, n)
		v, _ := f.AppendValue(nil, n)
		if got := decode(t, k); !reflect.DeepEqual(got, wantKey) {
			t.Errorf("key %s, want %v", k, wantKey)
		}
		if got := decode(t, v); !reflect.DeepEqual(got, wantValue) {
			t.Errorf("value %s, want %v", v, wantValue)
		}
	})
	t.Run("JSON with schemas", func(t *testing.T) {
		f := &NotificationFormat{keyFormat: config.FormatJSON, valueFmt: config.FormatJSON, schemas: true}
		k, _ := f.AppendKey(nil, n)
		v, _ := f.AppendValue(nil, n)
		if got := decode(t, k); !reflect.DeepEqual(got, map[string]any{"schema": wantKeySchema, "payload": wantKey}) {
			t.Errorf("key %s", k)
		}
		if got := decode(t, v); !reflect.DeepEqual(got, map[string]any{"schema": wantValueSchema, "payload": wantValue}) {
			t.Errorf("value %s", v)
		}
	})
	t.Run("no additional data is null, as the optional map", func(t *testing.T) {
		f := &NotificationFormat{keyFormat: config.FormatJSON, valueFmt: config.FormatJSON}
		m := n
		m.AdditionalData = nil
		v, _ := f.AppendValue(nil, m)
		if got := decode(t, v).(map[string]any); got["additional_data"] != nil {
			t.Errorf("value %s", v)
		}
	})
	t.Run("text JSON must escape", func(t *testing.T) {
		f := &NotificationFormat{keyFormat: config.FormatJSON, valueFmt: config.FormatJSON}
		m := n
		m.AdditionalData = map[string]string{"data_collections": "public.\"odd\\name\"\n\x01<x>&é"}
		v, _ := f.AppendValue(nil, m)
		got := decode(t, v).(map[string]any)["additional_data"].(map[string]any)["data_collections"]
		if got != m.AdditionalData["data_collections"] {
			t.Errorf("value %s decodes to %q", v, got)
		}
	})
	t.Run("Avro", func(t *testing.T) {
		ks, vs := avro.MustParse(NotificationKeyAvro), avro.MustParse(NotificationValueAvro)
		f := &NotificationFormat{keyFormat: config.FormatAvro, valueFmt: config.FormatAvro, keySchema: ks, valSchema: vs, keyID: 7, valueID: 8}
		k, err := f.AppendKey(nil, n)
		if err != nil {
			t.Fatal(err)
		}
		v, err := f.AppendValue(nil, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			b    []byte
			id   uint32
			s    avro.Schema
			want map[string]any
		}{{k, 7, ks, wantKey}, {v, 8, vs, wantValue}} {
			if c.b[0] != 0 || binary.BigEndian.Uint32(c.b[1:5]) != c.id {
				t.Fatalf("frame %x, want magic 0 and id %d", c.b[:5], c.id)
			}
			var got map[string]any
			if err := avro.Unmarshal(c.s, c.b[5:], &got); err != nil {
				t.Fatal(err)
			}
			// Avro's long decodes as int64, and a union generically as
			// {branch: value}: additional_data is ["null", map].
			want := map[string]any{}
			for key, val := range c.want {
				want[key] = val
			}
			if _, ok := want["timestamp"]; ok {
				want["timestamp"] = int64(1700000000123)
				want["additional_data"] = map[string]any{"map": want["additional_data"]}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded %v, want %v", got, want)
			}
		}
		names := map[string]string{NotificationKeyAvro: "io.debezium.connector.common.NotificationKey",
			NotificationValueAvro: "io.debezium.connector.common.Notification"}
		for text, name := range names {
			var s struct {
				Name      string `json:"connect.name"`
				Version   int    `json:"connect.version"`
				Namespace string `json:"namespace"`
			}
			if err := json.Unmarshal([]byte(text), &s); err != nil || s.Name != name || s.Version != 1 {
				t.Errorf("schema %s: %+v %v", text, s, err)
			}
		}
	})
	t.Run("cloudevents writes a null value", func(t *testing.T) {
		// CloudEventsConverter.java:268-272: not a change envelope.
		f := &NotificationFormat{keyFormat: config.FormatJSON, valueFmt: config.FormatCloudEvents}
		if v, err := f.AppendValue(nil, n); v != nil || err != nil {
			t.Errorf("value %s %v, want nil", v, err)
		}
	})
}
