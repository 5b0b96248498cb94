package record

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/internal/srtest"
	"github.com/mooncdc/mooncdc/schema"
)

// chainTestFormats are the formats of a default config (topic prefix
// shop, database inventory) with format.key and format.value format
// (json, json with schemas, avro in reg), and, with props, the chain they
// configure; errs counts its failures.
func chainTestFormats(t testing.TB, format string, schemas bool, reg *srtest.Registry, props map[string]string, errs *prometheus.CounterVec) *Formats {
	t.Helper()
	cfg := config.DefaultConfig()
	cfg.Name = "shop"
	cfg.Format.Key, cfg.Format.Value, cfg.Format.JSONSchemas = format, format, schemas
	if reg != nil {
		cfg.Format.SchemaRegistry.URL = reg.URL()
	}
	cfg.ApplyDefaults()
	cfg.Kafka.TopicPrefix = "shop"
	naming, err := cfg.TopicNaming()
	if err != nil {
		t.Fatal(err)
	}
	var r *Registry
	if reg != nil {
		if r, err = NewRegistry(cfg.Format.SchemaRegistry, zap.NewNop()); err != nil {
			t.Fatal(err)
		}
	}
	f := NewFormats(cfg.Format, EncoderConfig(&cfg, "inventory", naming, nil, nil), r, naming, 1<<20, zap.NewNop())
	if props != nil {
		chain, err := transform.Parse(props)
		if err != nil {
			t.Fatal(err)
		}
		f.SetTransforms(&Transforms{Chain: chain, Context: ContextHeaders("shop", "6a3c"), Errors: errs})
	}
	return f
}

func testWriter(f *Formats) (*Writer, *delivery.Tracker) {
	tracker := delivery.NewTracker(0, 1<<20, nil)
	return NewWriter(f.Codec(), nil, NewAcks(tracker, new(Pool), nil)), tracker
}

// neverApplied is a chain whose one transform's predicate never holds:
// the records must come out as they go in.
var neverApplied = map[string]string{
	"transforms":                    "never",
	"transforms.never.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
	"transforms.never.static.field": "x",
	"transforms.never.static.value": "y",
	"transforms.never.predicate":    "nope",
	"predicates":                    "nope",
	"predicates.nope.type":          "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
	"predicates.nope.pattern":       "no-such-topic",
}

// viewChanges are a transaction's records of numericTable: an insert with
// every kind of value the view reads back (a NaN, an infinity, a decimal,
// NULLs), an update, a delete with its tombstone, a truncate. (Floats in
// exponent form are left out: the plain path writes Postgres' text, 1e-45,
// where Java's Float.toString, and so the converter, writes 1.4E-45: the
// same number.)
func viewChanges() []*schema.Change {
	rel := numericTable()
	tx := &schema.Tx{Xid: 771, CommitLSN: 0x2000, CommitTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	nulls := schema.Tuple{{Kind: schema.ValueText, Data: []byte("8")}, {}, {}, {}, {}, {}, {}, {}, {}, {}}
	return []*schema.Change{
		{Op: schema.OpCreate, Relation: rel, Tx: tx, LSN: 0x1F00, After: textTuple("7", "1", "123456", "1234567890123", "3.3", "4.44", "t", "NaN", "Infinity", "1.10")},
		{Op: schema.OpCreate, Relation: rel, Tx: tx, LSN: 0x1F10, Seq: 1, After: nulls},
		{Op: schema.OpUpdate, Relation: rel, Tx: tx, LSN: 0x1F20, Seq: 2, After: textTuple("7", "-2", "0", "-9223372036854775808", "-1.5", "2.25", "f", "-Infinity", "NaN", "-0.01")},
		{Op: schema.OpDelete, Relation: rel, Tx: tx, LSN: 0x1F30, Seq: 3, Before: nulls},
		{Op: schema.OpTruncate, Relation: rel, Tx: tx, LSN: 0x1F40, Seq: 4},
	}
}

// TestAChainThatChangesNothingWritesThePlainBytes: a record read into its
// Connect view and written by the converters is the record the plain path
// writes, in plain JSON, JSON with schemas and Avro (the same registry
// ids): so the view loses nothing and the converters add nothing, for
// changes, tombstones, transaction and schema-change records. The headers
// are mooncdc's, then the record's Connect headers (Debezium's context
// headers, DebeziumHeaderProducer.java:64-67 at v3.6.1.Final).
func TestAChainThatChangesNothingWritesThePlainBytes(t *testing.T) {
	for _, c := range []struct {
		name    string
		format  string
		schemas bool
	}{{"json", config.FormatJSON, false}, {"json-schemas", config.FormatJSON, true}, {"avro", config.FormatAvro, false}} {
		t.Run(c.name, func(t *testing.T) {
			var reg *srtest.Registry
			if c.format == config.FormatAvro {
				reg = srtest.New(t)
			}
			plainF := chainTestFormats(t, c.format, c.schemas, reg, nil, nil)
			chainF := chainTestFormats(t, c.format, c.schemas, reg, neverApplied, nil)
			plain, tracker := testWriter(plainF)
			chained, _ := testWriter(chainF)
			if !chained.Codec.Chained() || plain.Codec.Chained() {
				t.Fatal("the chain is not chosen when the codec is made")
			}
			topic := "shop.public.numeric_table"
			now := time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)
			unit := tracker.Begin()
			for _, ch := range viewChanges() {
				sp := schema.NewPlan(plainF.SchemaConfig(), ch.Relation)
				if err := plain.Codec.Prepare(context.Background(), topic, sp); err != nil {
					t.Fatal(err)
				}
				want, wantTS, err := plain.Change(unit, topic, sp, ch, now, true, ch.Op == schema.OpDelete)
				if err != nil {
					t.Fatal(err)
				}
				got, gotTS, err := chained.Change(unit, topic, sp, ch, now, true, ch.Op == schema.OpDelete)
				if err != nil {
					t.Fatalf("%c: %v", ch.Op, err)
				}
				sameRecord(t, string(ch.Op), got, want)
				if (gotTS == nil) != (wantTS == nil) {
					t.Fatalf("%c: tombstone %v, want %v", ch.Op, gotTS, wantTS)
				}
				if gotTS != nil {
					sameRecord(t, "tombstone", gotTS, wantTS)
				}
			}
			ev := &schema.TxEvent{Status: schema.TxEnd, Xid: 771, LSN: 0x2008, CommitTime: time.UnixMilli(1767323045000),
				EventCount: 5, Collections: []schema.CollectionCount{{Name: "public.numeric_table", Count: 5}}}
			tx := &schema.Tx{Xid: 771, CommitLSN: 0x2000}
			if err := plain.Codec.PrepareTx(context.Background(), "shop.transaction"); err != nil {
				t.Fatal(err)
			}
			want, err := plain.TxEvent(unit, "shop.transaction", tx, ev)
			if err != nil {
				t.Fatal(err)
			}
			got, err := chained.TxEvent(unit, "shop.transaction", tx, ev)
			if err != nil {
				t.Fatal(err)
			}
			sameRecord(t, "END", got, want)
		})
	}
}

// sameRecord compares a chained record with the plain one: topic, key,
// value, and the headers (mooncdc's, then only in got the four context
// headers).
func sameRecord(t *testing.T, what string, got, want *kgo.Record) {
	t.Helper()
	if got.Topic != want.Topic || !bytes.Equal(got.Key, want.Key) || !bytes.Equal(got.Value, want.Value) || (got.Value == nil) != (want.Value == nil) {
		t.Fatalf("%s:\n got %s key %q value %q\nwant %s key %q value %q", what, got.Topic, got.Key, got.Value, want.Topic, want.Key, want.Value)
	}
	if len(got.Headers) < len(want.Headers) {
		t.Fatalf("%s: headers %v, want %v first", what, got.Headers, want.Headers)
	}
	for i, h := range want.Headers {
		if got.Headers[i].Key != h.Key || !bytes.Equal(got.Headers[i].Value, h.Value) {
			t.Errorf("%s: header %d = %s=%s, want %s=%s", what, i, got.Headers[i].Key, got.Headers[i].Value, h.Key, h.Value)
		}
	}
	extra := got.Headers[len(want.Headers):]
	if len(extra) != 0 && (len(extra) != 4 || extra[0].Key != HeaderContextLogicalName || string(extra[0].Value) != "shop") {
		t.Errorf("%s: headers after mooncdc's %v, want none or the four context headers", what, extra)
	}
}

// TestChainedRecordsTransformFilterAndPark: InsertField$Value with a
// static field appends an optional string field to the value struct
// (InsertField.java:193-205 and InsertFieldTest's static field expectation,
// connect/transforms/src/test/java/org/apache/kafka/connect/transforms/InsertFieldTest.java
// at 1eb7644349c); Debezium's Filter with value.op != 'd' drops a delete
// (a dropped record, which Send recycles unsent: the unit completes
// without it) and keeps its tombstone (null.handling.mode keep, Debezium's
// default: Filter's ScriptingTransformation.java); a Cast of op to int32
// fails on "c" and is a *RecordError at the change's LSN wrapping the
// *transform.Error, the table's own fault (parked), counted under stage
// transform.
func TestChainedRecordsTransformFilterAndPark(t *testing.T) {
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "e"}, []string{"stage"})
	f := chainTestFormats(t, config.FormatJSON, false, nil, map[string]string{
		"transforms":                        "dropDeletes,addRegion",
		"transforms.dropDeletes.type":       "io.debezium.transforms.Filter",
		"transforms.dropDeletes.language":   "cel",
		"transforms.dropDeletes.condition":  "value.op != 'd'",
		"transforms.addRegion.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.addRegion.static.field": "region",
		"transforms.addRegion.static.value": "EU",
		"transforms.addRegion.predicate":    "isTombstone",
		"transforms.addRegion.negate":       "true",
		"predicates":                        "isTombstone",
		"predicates.isTombstone.type":       "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
	}, errs)
	w, tracker := testWriter(f)
	unit := tracker.Begin()
	chs := viewChanges()
	sp := schema.NewPlan(f.SchemaConfig(), chs[0].Relation)
	now := time.Now()
	rec, _, err := w.Change(unit, "shop.public.numeric_table", sp, chs[0], now, true, false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(rec.Value, []byte(`,"region":"EU"}`)) || !bytes.Contains(rec.Value, []byte(`"op":"c"`)) {
		t.Errorf("insert with region: %s", rec.Value)
	}
	del, ts, err := w.Change(unit, "shop.public.numeric_table", sp, chs[3], now, true, true)
	if err != nil {
		t.Fatal(err)
	}
	if !dropped(del) {
		t.Errorf("the delete was not dropped: %s", del.Value)
	}
	if ts == nil || ts.Value != nil || string(ts.Key) != `{"pk":8}` {
		t.Fatalf("the tombstone after the dropped delete: %+v, want kept (null value, the key)", ts)
	}
	w.Send(del) // recycled, not sent (a nil sink would panic)

	bad := chainTestFormats(t, config.FormatJSON, false, nil, map[string]string{
		"transforms": "castOp", "transforms.castOp.type": "org.apache.kafka.connect.transforms.Cast$Value",
		"transforms.castOp.spec": "op:int32",
	}, errs)
	bw, _ := testWriter(bad)
	_, _, err = bw.Change(unit, "shop.public.numeric_table", sp, chs[0], now, true, false)
	var re *RecordError
	var te *transform.Error
	if !errors.As(err, &re) || re.LSN != 0x1F00 || !errors.As(err, &te) || te.Alias != "castOp" {
		t.Fatalf("a failing Cast: %v; want a *RecordError at 0/1F00 wrapping the *transform.Error of castOp", err)
	}
	if !fault.TableFault(err) {
		t.Errorf("%v is not the table's own fault: the table would not be parked", err)
	}
	if n := testutil.ToFloat64(errs.WithLabelValues("transform")); n != 1 {
		t.Errorf("mooncdc_format_errors_total{stage=transform} = %v, want 1", n)
	}
	if !strings.Contains(err.Error(), "castOp") {
		t.Errorf("the error does not name the transform: %v", err)
	}
}
