package record

import (
	"math"
	"math/big"
	"reflect"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// viewTestFormats are the formats of a default config with topic prefix
// "shop" on database "inventory", changed by mutate (nil: defaults).
func viewTestFormats(t testing.TB, mutate func(*config.Config)) *Formats {
	t.Helper()
	cfg := config.DefaultConfig()
	cfg.Name = "shop"
	if mutate != nil {
		mutate(&cfg)
	}
	cfg.ApplyDefaults()
	cfg.Kafka.TopicPrefix = "shop"
	naming, err := cfg.TopicNaming()
	if err != nil {
		t.Fatal(err)
	}
	return NewFormats(cfg.Format, EncoderConfig(&cfg, "inventory", naming, nil, nil), nil, naming, 1<<20, zap.NewNop())
}

// numericTable is Debezium's numeric_table, some of its columns
// (debezium-connector-postgres/src/test/resources/postgres_create_tables.ddl:3
// at v3.6.1.Final), with pk the primary key and d a numeric(3,2) of
// numeric_decimal_table (ddl:12).
func numericTable() *schema.Relation {
	return &schema.Relation{OID: 16400, Schema: "public", Table: "numeric_table", ReplicaIdentity: 'd',
		Columns: []schema.Column{
			{Name: "pk", TypeOID: 23, TypeMod: -1, Key: true, NotNull: true},
			{Name: "si", TypeOID: 21, TypeMod: -1},
			{Name: "i", TypeOID: 23, TypeMod: -1},
			{Name: "bi", TypeOID: 20, TypeMod: -1},
			{Name: "r", TypeOID: 700, TypeMod: -1},
			{Name: "db", TypeOID: 701, TypeMod: -1},
			{Name: "b", TypeOID: 16, TypeMod: -1},
			{Name: "r_nan", TypeOID: 700, TypeMod: -1},
			{Name: "db_pinf", TypeOID: 701, TypeMod: -1},
			{Name: "d", TypeOID: 1700, TypeMod: 3<<16 | 2 + 4},
		},
		KeyIndexes: []int{0}}
}

func textTuple(vals ...string) schema.Tuple {
	t := make(schema.Tuple, len(vals))
	for i, v := range vals {
		t[i] = schema.Value{Kind: schema.ValueText, Data: []byte(v)}
	}
	return t
}

func field(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, name := range path {
		st, ok := v.(*transform.Struct)
		if !ok {
			t.Fatalf("%v: %#v is not a Struct", path, v)
		}
		if v, ok = st.Get(name); !ok {
			t.Fatalf("%v: no field %q in %s", path, name, st.Schema.Name)
		}
	}
	return v
}

// TestConnectViewIsDebeziumsRecordBeforeTheConverter: the view of an
// insert is the SourceRecord Debezium's EventDispatcher makes
// (EventDispatcher.java:527-542 at v3.6.1.Final): the key Struct of the
// key columns, the Envelope with after, source and op, the values as
// Debezium's own test expects them in the Connect record
// (AbstractRecordsProducerTest.java:143-145 inserts them, :239-255 and
// :270 expect them: INT16 1, INT32 123456, INT64 1234567890123, FLOAT32
// 3.3f, FLOAT64 4.44d, BOOLEAN true, FLOAT32 NaN, FLOAT64 +Infinity, a
// Decimal of scale 2 for 1.10), partition and timestamp null, the four
// context headers.
func TestConnectViewIsDebeziumsRecordBeforeTheConverter(t *testing.T) {
	f := viewTestFormats(t, nil)
	rel := numericTable()
	sp := schema.NewPlan(f.SchemaConfig(), rel)
	v := NewConnectView(f.SchemaConfig(), ContextHeaders("shop", "6a3c"))
	tx := &schema.Tx{Xid: 771, CommitLSN: 0x2000, CommitTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	ch := &schema.Change{Op: schema.OpCreate, Relation: rel, Tx: tx, LSN: 0x1F00,
		After: textTuple("7", "1", "123456", "1234567890123", "3.3", "4.44", "t", "NaN", "Infinity", "1.10")}
	r, err := v.Change("shop.public.numeric_table", sp, ch, time.Now(), true)
	if err != nil {
		t.Fatal(err)
	}
	if r.Topic != "shop.public.numeric_table" || r.Partition != nil || r.Timestamp != nil {
		t.Errorf("topic %q partition %v timestamp %v, want the table's topic, nil, nil", r.Topic, r.Partition, r.Timestamp)
	}
	if r.KeySchema == nil || r.KeySchema.Type != schema.TypeStruct || r.KeySchema.Name != "shop.public.numeric_table.Key" {
		t.Fatalf("key schema %+v, want the struct shop.public.numeric_table.Key", r.KeySchema)
	}
	if got := field(t, r.Key, "pk"); got != int32(7) {
		t.Errorf("key pk = %#v, want int32 7", got)
	}
	if r.ValueSchema.Name != "shop.public.numeric_table.Envelope" {
		t.Errorf("value schema %q, want the Envelope", r.ValueSchema.Name)
	}
	for _, c := range []struct {
		name string
		want any
	}{
		{"si", int16(1)}, {"i", int32(123456)}, {"bi", int64(1234567890123)},
		{"r", float32(3.3)}, {"db", 4.44}, {"b", true}, {"db_pinf", math.Inf(1)},
	} {
		if got := field(t, r.Value, "after", c.name); got != c.want {
			t.Errorf("after.%s = %#v, want %#v", c.name, got, c.want)
		}
	}
	if got, ok := field(t, r.Value, "after", "r_nan").(float32); !ok || !math.IsNaN(float64(got)) {
		t.Errorf("after.r_nan = %#v, want float32 NaN", got)
	}
	if got, ok := field(t, r.Value, "after", "d").(transform.Decimal); !ok || got.Scale != 2 || got.Unscaled.Cmp(big.NewInt(110)) != 0 {
		t.Errorf("after.d = %#v, want the Decimal 1.10", field(t, r.Value, "after", "d"))
	}
	if got := field(t, r.Value, "before"); got != nil {
		t.Errorf("before = %#v, want null for an insert", got)
	}
	for _, c := range []struct {
		path []string
		want any
	}{
		{[]string{"op"}, "c"}, {[]string{"source", "connector"}, "postgresql"}, {[]string{"source", "name"}, "shop"},
		{[]string{"source", "db"}, "inventory"}, {[]string{"source", "table"}, "numeric_table"},
		{[]string{"source", "txId"}, int64(771)}, {[]string{"source", "lsn"}, int64(0x1F00)},
	} {
		if got := field(t, r.Value, c.path...); got != c.want {
			t.Errorf("%v = %#v, want %#v", c.path, got, c.want)
		}
	}
	wantHeaders := []transform.Header{ // DebeziumHeaderProducer.java:64-67, DebeziumHeaders.java:12-15
		{Key: "__debezium.context.connectorLogicalName", Value: "shop"},
		{Key: "__debezium.context.taskId", Value: "0"},
		{Key: "__debezium.context.connectorName", Value: "postgresql"},
		{Key: "__debezium.context.runId", Value: "6a3c"},
	}
	if len(r.Headers) != len(wantHeaders) {
		t.Fatalf("headers %+v, want %+v", r.Headers, wantHeaders)
	}
	for i, h := range r.Headers {
		if h.Key != wantHeaders[i].Key || h.Value != wantHeaders[i].Value || h.Schema == nil || h.Schema.Type != schema.TypeString || h.Schema.Optional {
			t.Errorf("header %d = %+v, want %+v with a required string schema", i, h, wantHeaders[i])
		}
	}
	if err := transform.Validate(r.KeySchema, r.Key); err != nil {
		t.Errorf("the key is not a value of its schema: %v", err)
	}
	if err := transform.Validate(r.ValueSchema, r.Value); err != nil {
		t.Errorf("the value is not a value of its schema: %v", err)
	}

	// The tombstone after a delete: the same key, schema and headers, a
	// null value without schema (EventDispatcher.java:546-555).
	del := &schema.Change{Op: schema.OpDelete, Relation: rel, Tx: tx, LSN: 0x1F80,
		Before: schema.Tuple{{Kind: schema.ValueText, Data: []byte("7")}, {}, {}, {}, {}, {}, {}, {}, {}, {}}}
	r, err = v.Change("shop.public.numeric_table", sp, del, time.Now(), true)
	if err != nil {
		t.Fatal(err)
	}
	if got := field(t, r.Value, "op"); got != "d" {
		t.Errorf("delete op = %#v", got)
	}
	ts := Tombstone(r)
	if ts.Value != nil || ts.ValueSchema != nil || !reflect.DeepEqual(ts.Key, r.Key) || ts.KeySchema != r.KeySchema || len(ts.Headers) != 4 {
		t.Errorf("tombstone %+v: want the delete's key, schema and headers with a null value and value schema", ts)
	}

	// A truncate has no key and a null key schema (EventDispatcher.java:527-528).
	r, err = v.Change("shop.public.numeric_table", sp, &schema.Change{Op: schema.OpTruncate, Relation: rel, Tx: tx, LSN: 0x1F90}, time.Now(), true)
	if err != nil {
		t.Fatal(err)
	}
	if r.Key != nil || r.KeySchema != nil || field(t, r.Value, "op") != "t" {
		t.Errorf("truncate: key %#v schema %v op %v, want no key, no key schema, op t", r.Key, r.KeySchema, field(t, r.Value, "op"))
	}
}

// TestConnectViewOfTheOtherRecords: a transaction's BEGIN and END
// (AbstractTransactionStructMaker.java:48-79 at v3.6.1.Final: status, id,
// ts_ms, and END's event_count and data_collections; TransactionMonitor.java:166-177:
// no partition, no headers), a heartbeat (HeartbeatImpl.java:153-178:
// serverName, ts_ms, partition 0, no headers), a schema change
// (EventDispatcher.java:724-732: partition 0, the context headers) and
// the flat envelope's delete-to-tombstone (null value and value schema,
// DefaultDeleteHandlingStrategy.java:61-69).
func TestConnectViewOfTheOtherRecords(t *testing.T) {
	f := viewTestFormats(t, nil)
	v := NewConnectView(f.SchemaConfig(), ContextHeaders("shop", "6a3c"))
	commit := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	begin, err := v.TxEvent("shop.transaction", &schema.TxEvent{Status: schema.TxBegin, Xid: 771, LSN: 0x1F00, CommitTime: commit})
	if err != nil {
		t.Fatal(err)
	}
	if field(t, begin.Key, "id") != "771:7936" || field(t, begin.Value, "status") != "BEGIN" ||
		field(t, begin.Value, "ts_ms") != commit.UnixMilli() || field(t, begin.Value, "event_count") != nil ||
		begin.Partition != nil || begin.Headers != nil {
		t.Errorf("BEGIN %+v", begin)
	}
	end, err := v.TxEvent("shop.transaction", &schema.TxEvent{Status: schema.TxEnd, Xid: 771, LSN: 0x2000, CommitTime: commit,
		EventCount: 3, Collections: []schema.CollectionCount{{Name: "public.a", Count: 2}, {Name: "public.b", Count: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	colls, _ := field(t, end.Value, "data_collections").([]any)
	if field(t, end.Value, "event_count") != int64(3) || len(colls) != 2 ||
		field(t, colls[0], "data_collection") != "public.a" || field(t, colls[1], "event_count") != int64(1) {
		t.Errorf("END %+v", end.Value)
	}

	hb := Heartbeat("__debezium-heartbeat.shop", "shop", 1234)
	if field(t, hb.Key, "serverName") != "shop" || field(t, hb.Value, "ts_ms") != int64(1234) ||
		hb.Partition == nil || *hb.Partition != 0 || hb.Headers != nil {
		t.Errorf("heartbeat %+v", hb)
	}
	if err := transform.Validate(hb.ValueSchema, hb.Value); err != nil {
		t.Error(err)
	}

	sc, err := v.SchemaChange("shop.schema_changes", &schema.SchemaChange{Type: schema.SchemaChangeAlter, DDL: "ALTER TABLE a ADD c int",
		Table: schema.DDLTable{Schema: "public", Table: "a"}, Xid: 9, LSN: 0x3000, CommitTime: commit, Now: commit})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Partition == nil || *sc.Partition != 0 || len(sc.Headers) != 4 || field(t, sc.Value, "ddl") != "ALTER TABLE a ADD c int" {
		t.Errorf("schema change %+v", sc)
	}

	flat := viewTestFormats(t, func(c *config.Config) {
		c.Format.Envelope = config.EnvelopeFlat
		c.Format.Flat.DeleteHandling = string(schema.DeleteToTombstone)
	})
	rel := numericTable()
	sp := schema.NewPlan(flat.SchemaConfig(), rel)
	fv := NewConnectView(flat.SchemaConfig(), nil)
	del := &schema.Change{Op: schema.OpDelete, Relation: rel, LSN: 0x1F80, Tx: &schema.Tx{Xid: 1},
		Before: schema.Tuple{{Kind: schema.ValueText, Data: []byte("7")}, {}, {}, {}, {}, {}, {}, {}, {}, {}}}
	r, err := fv.Change("shop.public.numeric_table", sp, del, commit, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Value != nil || r.ValueSchema != nil || field(t, r.Key, "pk") != int32(7) || r.Headers != nil {
		t.Errorf("delete-to-tombstone %+v: want the key, a null value and value schema, no headers (nil context)", r)
	}
}

// BenchmarkConnectView is the view's cost per record (an encode and a
// decode) beside the plain JSON encode it adds to.
func BenchmarkConnectView(b *testing.B) {
	f := viewTestFormats(b, nil)
	rel := numericTable()
	sp := schema.NewPlan(f.SchemaConfig(), rel)
	ch := &schema.Change{Op: schema.OpCreate, Relation: rel, Tx: &schema.Tx{Xid: 771, CommitLSN: 0x2000}, LSN: 0x1F00,
		After: textTuple("7", "1", "123456", "1234567890123", "3.3", "4.44", "t", "NaN", "Infinity", "1.10")}
	now := time.Now()
	b.Run("view", func(b *testing.B) {
		v := NewConnectView(f.SchemaConfig(), ContextHeaders("shop", "6a3c"))
		b.ReportAllocs()
		for range b.N {
			if _, err := v.Change("t", sp, ch, now, true); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plain-json", func(b *testing.B) {
		c := f.Codec()
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
