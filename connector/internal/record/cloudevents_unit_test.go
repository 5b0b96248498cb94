package record

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/schema"
)

// TestCloudEventsMarkSnapshotRewritesTheAttribute: a copy's last event
// gets its snapshot marker in the iodebeziumsnapshot attribute, which
// comes before data; a column of the same name in data is left alone.
func TestCloudEventsMarkSnapshotRewritesTheAttribute(t *testing.T) {
	c := &cloudEventsValue{}
	in := `{"id":"x","iodebeziumsnapshot":"true","iodebeziumdb":"d","data":{"after":{"iodebeziumsnapshot":"true"}}}`
	out, ok := c.MarkSnapshot([]byte(in), "true", "last")
	want := `{"id":"x","iodebeziumsnapshot":"last","iodebeziumdb":"d","data":{"after":{"iodebeziumsnapshot":"true"}}}`
	if !ok || string(out) != want {
		t.Fatalf("got %s, %v\nwant %s", out, ok, want)
	}
	if _, ok := c.MarkSnapshot([]byte(`{"iodebeziumsnapshot":"false"}`), "true", "last"); ok {
		t.Fatal("rewrote an event without the marker")
	}
}

// ceFormats are the formats of format.value cloudevents.
func ceFormats(t testing.TB, schemas bool) *Formats {
	return viewTestFormats(t, func(c *config.Config) {
		c.Format.Value, c.Format.JSONSchemas = config.FormatCloudEvents, schemas
	})
}

// TestCodecCloudEventsWritesChangesAndNullsTheRest: a table change is one
// CloudEvent whose data is the row; a logical message, a transaction
// record and a schema change are null, as CloudEventsConverter writes
// every value that is no change envelope (CloudEventsConverter.java:264-272
// at Debezium v3.6.1.Final).
func TestCodecCloudEventsWritesChangesAndNullsTheRest(t *testing.T) {
	for _, schemas := range []bool{false, true} {
		c := ceFormats(t, schemas).Codec()
		rel := numericTable()
		sp := schema.NewPlan(ceFormats(t, schemas).SchemaConfig(), rel)
		ch := &schema.Change{Op: schema.OpCreate, Relation: rel, Tx: &schema.Tx{Xid: 771, CommitLSN: 0x2000}, LSN: 0x1F00,
			After: textTuple("7", "1", "123456", "1234567890123", "3.3", "4.44", "t", "NaN", "Infinity", "1.10")}
		v, err := c.AppendValue(nil, sp, ch, time.UnixMilli(1_700_000_000_000))
		if err != nil {
			t.Fatal(err)
		}
		var ev struct {
			Type, Source, IodebeziumOp string
			Data                       json.RawMessage
		}
		if err := json.Unmarshal(v, &ev); err != nil {
			t.Fatalf("%v: %s", err, v)
		}
		var data struct {
			After   map[string]any `json:"after"`
			Payload *struct {
				After map[string]any `json:"after"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatal(err)
		}
		after := data.After
		if schemas {
			after = data.Payload.After
		}
		if ev.Type != "io.debezium.connector.postgresql.DataChangeEvent" || ev.Source != "/debezium/postgresql/shop" || ev.IodebeziumOp != "c" ||
			after["pk"] != 7.0 || after["bi"] != 1234567890123.0 || after["r_nan"] != "NaN" {
			t.Errorf("schemas %v: %s", schemas, v)
		}
		msg := &schema.Change{Op: schema.OpMessage, Message: &schema.Message{Prefix: "p", Content: []byte("x")}, Tx: &schema.Tx{Xid: 771}, LSN: 0x1F00}
		if v, err := c.AppendValue([]byte("old"), nil, msg, time.Now()); err != nil || v != nil {
			t.Errorf("a logical message: %q, %v; want null", v, err)
		}
		if v, err := c.AppendTxValue([]byte("old"), &schema.TxEvent{Status: schema.TxBegin, Xid: 771}); err != nil || v != nil {
			t.Errorf("a transaction record: %q, %v; want null", v, err)
		}
		if v, err := c.AppendSchemaChangeValue([]byte("old"), &schema.SchemaChange{}); err != nil || v != nil {
			t.Errorf("a schema change: %q, %v; want null", v, err)
		}
	}
}

// BenchmarkCloudEventsValue is a change's CloudEvent (the JSON encode, its
// read-back as Connect data, the event) beside the plain JSON value.
func BenchmarkCloudEventsValue(b *testing.B) {
	rel := numericTable()
	ch := &schema.Change{Op: schema.OpCreate, Relation: rel, Tx: &schema.Tx{Xid: 771, CommitLSN: 0x2000}, LSN: 0x1F00,
		After: textTuple("7", "1", "123456", "1234567890123", "3.3", "4.44", "t", "NaN", "Infinity", "1.10")}
	now := time.Now()
	for _, bc := range []struct {
		name string
		f    *Formats
	}{{"cloudevents", ceFormats(b, false)}, {"plain-json", viewTestFormats(b, nil)}} {
		b.Run(bc.name, func(b *testing.B) {
			c := bc.f.Codec()
			sp := schema.NewPlan(bc.f.SchemaConfig(), rel)
			var buf []byte
			b.ReportAllocs()
			for range b.N {
				var err error
				if buf, err = c.AppendValue(buf[:0], sp, ch, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestHeartbeatUnderCloudEventsIsNull: a heartbeat's value is no change
// envelope either: null under format.value cloudevents, its key as the
// key format writes it.
func TestHeartbeatUnderCloudEventsIsNull(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Name, cfg.Format.Value = "shop", config.FormatCloudEvents
	cfg.ApplyDefaults()
	f, err := NewHeartbeatFormat(t.Context(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := f.appendValue([]byte("old"), 1); err != nil || v != nil {
		t.Errorf("value %q, %v; want null", v, err)
	}
	if k, err := f.appendKey(nil); err != nil || string(k) != `{"serverName":"shop"}` {
		t.Errorf("key %s, %v", k, err)
	}
}

// TestCloudEventsDataFollowsReplaceNullWithDefault: a NULL in a column
// with a default is the default in the event's data under
// format.replace_null_with_default (true, JsonConverter's default) and
// stays null under false, as the data's JsonConverter does with
// json.replace.null.with.default.
func TestCloudEventsDataFollowsReplaceNullWithDefault(t *testing.T) {
	rel := &schema.Relation{OID: 16500, Schema: "public", Table: "items", ReplicaIdentity: 'd',
		Columns: []schema.Column{
			{Name: "id", TypeOID: 23, TypeMod: -1, Key: true, NotNull: true},
			{Name: "qty", TypeOID: 23, TypeMod: -1, Default: "5", HasDefault: true},
		}, KeyIndexes: []int{0}}
	ch := &schema.Change{Op: schema.OpCreate, Relation: rel, Tx: &schema.Tx{Xid: 771, CommitLSN: 0x2000}, LSN: 0x1F00,
		After: schema.Tuple{{Kind: schema.ValueText, Data: []byte("1")}, {Kind: schema.ValueNull}}}
	for _, replace := range []bool{true, false} {
		f := viewTestFormats(t, func(c *config.Config) {
			c.Format.Value, c.Format.ReplaceNullWithDefault = config.FormatCloudEvents, replace
		})
		sp := schema.NewPlan(f.SchemaConfig(), rel)
		v, err := f.Codec().AppendValue(nil, sp, ch, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{true: `"after":{"id":1,"qty":5}`, false: `"after":{"id":1,"qty":null}`}[replace]
		if !strings.Contains(string(v), want) {
			t.Errorf("replace_null_with_default %v: no %s in %s", replace, want, v)
		}
	}
}
