package schema

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/internal/connecttest"
)

var (
	txBeginEvent = &TxEvent{Status: TxBegin, Xid: 556, LSN: 24023000,
		CommitTime: time.Date(2024, 1, 2, 3, 4, 5, 678_900_000, time.UTC)}
	txEndEvent = &TxEvent{Status: TxEnd, Xid: 556, LSN: 24023200,
		CommitTime: time.Date(2024, 1, 2, 3, 4, 5, 678_900_000, time.UTC),
		EventCount: 2, Collections: []CollectionCount{{"s1.a", 1}, {"s2.a", 1}}}
)

// TestTxMetadataRecordsPlainJSON: BEGIN has null counts, END the event
// count and one {data_collection, event_count} per table
// (AbstractTransactionStructMaker.java:47-77; TransactionMetadataIT.java:241-273
// checks status, id, event_count null on BEGIN, the per-table counts on
// END, and that the key's id is the value's); the id is "<xid>:<lsn>"
// (PostgresTransactionMonitor.java:53-57) and ts_ms the commit time.
func TestTxMetadataRecordsPlainJSON(t *testing.T) {
	e := NewJSONEncoder(testJSONConfig)
	for _, tt := range []struct {
		ev         *TxEvent
		key, value string
	}{
		{txBeginEvent, `{"id":"556:24023000"}`,
			`{"status":"BEGIN","id":"556:24023000","event_count":null,"data_collections":null,"ts_ms":1704164645678}`},
		{txEndEvent, `{"id":"556:24023200"}`,
			`{"status":"END","id":"556:24023200","event_count":2,"data_collections":[{"data_collection":"s1.a","event_count":1},` +
				`{"data_collection":"s2.a","event_count":1}],"ts_ms":1704164645678}`},
	} {
		k, _ := e.AppendTxKey(nil, tt.ev)
		v, _ := e.AppendTxValue(nil, tt.ev)
		if string(k) != tt.key || string(v) != tt.value {
			t.Errorf("%s:\n got  %s %s\n want %s %s", tt.ev.Status, k, v, tt.key, tt.value)
		}
	}
}

// TestTxMetadataRecordsJSONWithSchemas: with schemas the records carry
// TransactionMetadataKey and TransactionMetadataValue version 1
// (SchemaFactory.java:62-72,200-219) and JsonConverter accepts them.
func TestTxMetadataRecordsJSONWithSchemas(t *testing.T) {
	e := NewJSONSchemaEncoder(testJSONConfig)
	for _, ev := range []*TxEvent{txBeginEvent, txEndEvent} {
		k, _ := e.AppendTxKey(nil, ev)
		v, _ := e.AppendTxValue(nil, ev)
		for _, b := range [][]byte{k, v} {
			if err := connecttest.Validate(b); err != nil {
				t.Errorf("%s: JsonConverter would refuse %s: %v", ev.Status, b, err)
			}
		}
		var rec struct {
			Schema connectField `json:"schema"`
		}
		if err := json.Unmarshal(v, &rec); err != nil {
			t.Fatal(err)
		}
		s := rec.Schema
		if s.Name != "io.debezium.connector.common.TransactionMetadataValue" || s.Version != 1 {
			t.Errorf("value schema %s version %d", s.Name, s.Version)
		}
		dc := fieldByName(t, s.Fields, "data_collections")
		if !dc.Optional || dc.Items == nil || dc.Items.Name != "event.collection" || dc.Items.Version != 1 || !dc.Items.Optional {
			t.Errorf("data_collections = %+v", dc)
		}
		if f := fieldByName(t, s.Fields, "event_count"); !f.Optional {
			t.Errorf("event_count is required")
		}
		if err := json.Unmarshal(k, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Schema.Name != "io.debezium.connector.common.TransactionMetadataKey" || rec.Schema.Version != 1 {
			t.Errorf("key schema %s version %d", rec.Schema.Name, rec.Schema.Version)
		}
	}
}

// TestTxMetadataRecordsAvroRoundTrip: the Avro records decode with their
// schemas to the same values.
func TestTxMetadataRecordsAvroRoundTrip(t *testing.T) {
	e := NewAvroEncoder(testJSONConfig)
	if err := e.RegisterTxMetadata(true, true, func(isKey bool, _ string) (int, error) {
		if isKey {
			return 3, nil
		}
		return 4, nil
	}); err != nil {
		t.Fatal(err)
	}
	ks, vs := TxMetadataAvroSchemas()
	k, err := e.AppendTxKey(nil, txEndEvent)
	if err != nil {
		t.Fatal(err)
	}
	if got := avroDecode(t, ks, 3, k); got["id"] != "556:24023200" {
		t.Errorf("key = %v", got)
	}
	v, err := e.AppendTxValue(nil, txEndEvent)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(avroDecode(t, vs, 4, v))
	// hamba names the branch of a union holding an array "array", and of
	// one holding a record the record's name.
	want := `{"data_collections":{"array":[{"event.collection":{"data_collection":"s1.a","event_count":1}},` +
		`{"event.collection":{"data_collection":"s2.a","event_count":1}}]},"event_count":2,"id":"556:24023200","status":"END","ts_ms":1704164645678}`
	if string(got) != want {
		t.Errorf("END value\n got  %s\n want %s", got, want)
	}
	v, _ = e.AppendTxValue(nil, txBeginEvent)
	got, _ = json.Marshal(avroDecode(t, vs, 4, v))
	if want := `{"data_collections":null,"event_count":null,"id":"556:24023000","status":"BEGIN","ts_ms":1704164645678}`; string(got) != want {
		t.Errorf("BEGIN value\n got  %s\n want %s", got, want)
	}
}
