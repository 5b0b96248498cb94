package records

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// Debezium's sources cited below are debezium-connect-plugins/src/main/java/io/debezium/transforms/
// at v3.6.1.Final: ENRS ExtractNewRecordState.java, AENRS
// AbstractExtractNewRecordState.java, DDHS
// extractnewstate/DefaultDeleteHandlingStrategy.java; ENRSTest is
// src/test/java/io/debezium/transforms/ExtractNewRecordStateTest.java.

// TestFlatEnvelopeEachDeleteHandlingMode: one snapshot row, then an
// insert, an update, a delete and (written, format.skipped_operations
// [none]) a truncate, then a last insert, through five pipelines, one per
// delete_handling mode. Every value is the row itself with __op, __table,
// __lsn and __source_ts_ms appended (ENRS.java:182-213; names
// AENRS.java:187-202), every record has the __op header (AENRS.java:136-152),
// the key is the row's key (ENRS.java:205-212), truncates are dropped
// (AbstractExtractRecordStrategy.java:41-46), and the delete becomes, by
// mode (DDHS.java:33-82):
//
//	drop                   nothing (ENRSTest.java:105-114)
//	tombstone              its value null with the row's schema: JSON null, not a Kafka tombstone (ENRSTest.java:117-127)
//	rewrite                the old row with __deleted "true", others "false" (ENRSTest.java:130-157)
//	rewrite-with-tombstone that, then a tombstone whose only added header is __op "d" (ENRSTest.java:484-503)
//	delete-to-tombstone    a Kafka tombstone carrying the delete's headers (ENRSTest.java:993-1007)
func TestFlatEnvelopeEachDeleteHandlingMode(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.items (id int PRIMARY KEY, name text)`)
	e.Exec(`ALTER TABLE public.items REPLICA IDENTITY FULL`)
	e.Exec(`INSERT INTO items VALUES (1, 'snap')`)
	modes := []string{"drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone"}
	runs := make([]*ittest.Running, len(modes))
	for i, mode := range modes {
		cfg := ittest.FlatConfig(e, "flat"+strings.ReplaceAll(mode, "-", ""), mode)
		cfg.Format.SkippedOperations = []string{"none"}
		runs[i] = ittest.StartStreaming(t, cfg)
	}
	for _, r := range runs {
		r.WaitHandedOver(t)
	}
	e.Exec(`INSERT INTO items VALUES (2, 'new')`)
	e.Exec(`UPDATE items SET name = 'changed' WHERE id = 2`)
	e.Exec(`DELETE FROM items WHERE id = 2`)
	e.Exec(`TRUNCATE items`)
	e.Exec(`INSERT INTO items VALUES (3, 'last')`)

	// what each record is: op of __op (or "-" for a Kafka tombstone, "null"
	// for a JSON null value), __deleted if any, the __op header.
	type rec struct{ op, deleted, hdr string }
	want := map[string][]rec{
		"drop":                   {{"r", "", "r"}, {"c", "", "c"}, {"u", "", "u"}, {"c", "", "c"}},
		"tombstone":              {{"r", "", "r"}, {"c", "", "c"}, {"u", "", "u"}, {"null", "", "d"}, {"c", "", "c"}},
		"rewrite":                {{"r", "false", "r"}, {"c", "false", "c"}, {"u", "false", "u"}, {"d", "true", "d"}, {"c", "false", "c"}},
		"rewrite-with-tombstone": {{"r", "false", "r"}, {"c", "false", "c"}, {"u", "false", "u"}, {"d", "true", "d"}, {"-", "", "d"}, {"c", "false", "c"}},
		"delete-to-tombstone":    {{"r", "", "r"}, {"c", "", "c"}, {"u", "", "u"}, {"-", "", "d"}, {"c", "", "c"}},
	}
	for _, mode := range modes {
		topic := "flat" + strings.ReplaceAll(mode, "-", "") + ".public.items"
		recs := ittest.ReadRaw(t, e.Kafka, len(want[mode]), topic)
		var got []rec
		for _, r := range recs {
			hdr, _ := ittest.Header(r, "__op")
			var key map[string]any
			if err := json.Unmarshal(r.Key, &key); err != nil || len(key) != 1 || key["id"] == nil {
				t.Errorf("%s: key %s, want the row's id", mode, r.Key)
			}
			switch {
			case r.Value == nil:
				got = append(got, rec{"-", "", hdr})
			case string(r.Value) == "null":
				got = append(got, rec{"null", "", hdr})
			default:
				m := ittest.FlatRow(t, r)
				d, _ := m["__deleted"].(string)
				got = append(got, rec{m["__op"].(string), d, hdr})
				if m["__table"] != "items" || m["__lsn"] == nil || m["__source_ts_ms"] == nil || m["id"] == nil {
					t.Errorf("%s: %s lacks the row or an added field", mode, r.Value)
				}
				if _, has := m["before"]; has {
					t.Errorf("%s: %s is an envelope", mode, r.Value)
				}
				if m["__op"] == "d" && m["name"] != "changed" {
					t.Errorf("%s: the rewritten delete is not the old row: %s", mode, r.Value)
				}
			}
		}
		if !equalRecs(got, want[mode]) {
			t.Errorf("%s:\n got  %v\n want %v", mode, got, want[mode])
		}
		if mode == "rewrite-with-tombstone" {
			ts := recs[4]
			if _, ok := ittest.Header(ts, connector.HeaderLSN); !ok || len(ts.Headers) != 4 {
				t.Errorf("tombstone headers %v, want mooncdc's three and __op", ts.Headers)
			}
		}
	}
	for _, r := range runs {
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	}
}

func equalRecs[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFlatEnvelopeJSONWithSchemasAndAvro: the flat records in JSON with
// schemas pass Kafka Connect's JsonConverter (unwrapConnect checks each),
// their value schema is <prefix>.public.items.Value, required, with the
// added fields optional (ENRS.java:282-302, AENRS.java:261-266), and a
// tombstone-mode delete is {"schema":…,"payload":null}; in Avro the
// registered value schema is the row's record, the delete rewritten, and
// source.snapshot as a header marks the copy's only row "last"
// (the snapshot marker of a one-row copy).
func TestFlatEnvelopeJSONWithSchemasAndAvro(t *testing.T) {
	e := ittest.NewEnv(t)
	reg := srtest.New(t)
	e.Exec(`CREATE TABLE public.items (id int PRIMARY KEY, name text)`)
	e.Exec(`INSERT INTO items VALUES (1, 'snap')`)
	js := ittest.FlatConfig(e, "flatjs", "tombstone")
	js.Format.JSONSchemas = true
	js.Format.Flat.AddFields = append(js.Format.Flat.AddFields, "snapshot") // __snapshot: a bare source field (AENRS.java:194, 222-223)
	av := ittest.FlatConfig(e, "flatav", "rewrite")
	av.Format.Key, av.Format.Value = config.FormatAvro, config.FormatAvro
	av.Format.SchemaRegistry.URL = reg.URL()
	av.Format.Flat.AddHeaders = []string{"op", "source.snapshot:snap"}
	r1, r2 := ittest.StartStreaming(t, js), ittest.StartStreaming(t, av)
	r1.WaitHandedOver(t)
	r2.WaitHandedOver(t)
	e.Exec(`INSERT INTO items VALUES (2, 'new')`)
	e.Exec(`UPDATE items SET name = 'changed' WHERE id = 2`)
	e.Exec(`DELETE FROM items WHERE id = 2`)

	recs := ittest.ReadRaw(t, e.Kafka, 4, "flatjs.public.items")
	for i, wantOp := range []string{"r", "c", "u"} {
		m := ittest.FlatRow(t, recs[i])
		if m["__op"] != wantOp || m["id"] == nil {
			t.Errorf("record %d: %v, want op %s", i, m, wantOp)
		}
	}
	if m := ittest.FlatRow(t, recs[0]); m["__snapshot"] != "last" {
		t.Errorf("snapshot row's __snapshot %v, want last (the copy's only row)", m["__snapshot"])
	}
	if m := ittest.FlatRow(t, recs[1]); m["__snapshot"] != "false" {
		t.Errorf("streamed change's __snapshot %v, want false", m["__snapshot"])
	}
	var vs struct {
		Schema struct {
			Name     string `json:"name"`
			Optional bool   `json:"optional"`
			Fields   []struct {
				Field    string `json:"field"`
				Type     string `json:"type"`
				Optional bool   `json:"optional"`
			} `json:"fields"`
		} `json:"schema"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(recs[1].Value, &vs); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range vs.Schema.Fields {
		names = append(names, f.Field+":"+f.Type)
		if strings.HasPrefix(f.Field, "__") && !f.Optional {
			t.Errorf("added field %s is required", f.Field)
		}
	}
	if vs.Schema.Name != "flatjs.public.items.Value" || vs.Schema.Optional ||
		strings.Join(names, ",") != "id:int32,name:string,__op:string,__table:string,__lsn:int64,__source_ts_ms:int64,__snapshot:string" {
		t.Errorf("value schema %s optional %v fields %v", vs.Schema.Name, vs.Schema.Optional, names)
	}
	del := recs[3]
	if err := json.Unmarshal(del.Value, &vs); err != nil || string(vs.Payload) != "null" || !vs.Schema.Optional ||
		vs.Schema.Name != "flatjs.public.items.Value" {
		t.Errorf("tombstone-mode delete %s, want the optional row schema and a null payload", del.Value)
	}
	ittest.UnwrapConnect(t, del) // JsonConverter reads it

	ar := ittest.ReadAvro(t, reg, e.Kafka, 4, "flatav.public.items")
	raw := ittest.ReadRaw(t, e.Kafka, 4, "flatav.public.items")
	for i, want := range []struct{ op, deleted, snap string }{{"r", "false", "last"}, {"c", "false", "false"}, {"u", "false", "false"}, {"d", "true", "false"}} {
		v := ar[i].Value
		if v["__op"] != want.op || v["__deleted"] != want.deleted || v["__table"] != "items" || v["id"] != 1+min(i, 1) {
			t.Errorf("avro record %d: %v, want op %s __deleted %s", i, v, want.op, want.deleted)
		}
		if h, _ := ittest.Header(raw[i], "__snap"); h != want.snap {
			t.Errorf("avro record %d: __snap header %q, want %q", i, h, want.snap)
		}
		if ar[i].Key["id"] != 1+min(i, 1) {
			t.Errorf("avro record %d key %v", i, ar[i].Key)
		}
	}
	if text, _ := reg.SchemaByID(ar[1].ValueID); !strings.Contains(text, `"name":"Value","namespace":"flatav.public.items"`) {
		t.Errorf("registered value schema %s", text)
	}
	if ar[3].Value["name"] != "changed" && ar[3].Value["name"] != nil {
		t.Errorf("rewritten delete %v", ar[3].Value)
	}
	for _, r := range []*ittest.Running{r1, r2} {
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	}
}
