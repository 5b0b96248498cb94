package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/connectformat"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/internal/srtest"
	"github.com/mooncdc/mooncdc/schema"
)

// TestProtobufAndJSONSchemaRecordsAreFramedAndRegisteredPerTopicSubject:
// with format.key and format.value protobuf or json_schema and no
// transforms, the codec runs the Connect view (chosen when it is made);
// a change's key and value are registered under <topic>-key and
// <topic>-value as connectformat renders the record's Connect schemas
// (Protobuf with its imports registered as references under subjects
// named by their path: confluent/type/decimal.proto for the numeric
// column), once per schema (the second change asks nothing), framed as
// Confluent's serializers frame them (magic byte, the id, for Protobuf the
// message index [0]), and the payload reads back as the row's values; a
// tombstone is no bytes (ProtobufConverter.java:121-126,
// JsonSchemaConverter.java:123-125 at schema-registry 794611bd86d); a
// transaction record goes under shop.transaction's subjects.
func TestProtobufAndJSONSchemaRecordsAreFramedAndRegisteredPerTopicSubject(t *testing.T) {
	for _, format := range []string{config.FormatProtobuf, config.FormatJSONSchema} {
		t.Run(format, func(t *testing.T) {
			reg := srtest.New(t)
			f := chainTestFormats(t, format, false, reg, nil, nil)
			w, tracker := testWriter(f)
			if !w.Codec.Chained() {
				t.Fatal("the Connect view is not chosen when the codec is made")
			}
			cl, err := sr.NewClient(sr.URLs(reg.URL()))
			if err != nil {
				t.Fatal(err)
			}
			topic := "shop.public.numeric_table"
			unit := tracker.Begin()
			chs := viewChanges()
			sp := schema.NewPlan(f.SchemaConfig(), chs[0].Relation)
			now := time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)
			rec, _, err := w.Change(unit, topic, sp, chs[0], now, true, false)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Topic != topic {
				t.Fatalf("topic %q", rec.Topic)
			}
			ks, vs := sp.ConnectSchemas(chs[0])
			for _, side := range []struct {
				subject string
				s       *schema.Schema
				b       []byte
			}{{topic + "-key", ks, rec.Key}, {topic + "-value", vs, rec.Value}} {
				id, payload := decodeFrame(t, format, side.b)
				got, err := cl.SchemaByID(context.Background(), id)
				if err != nil {
					t.Fatal(err)
				}
				if vers := reg.Versions(side.subject); len(vers) != 1 {
					t.Fatalf("%s: versions %v, want 1", side.subject, vers)
				}
				ss, err := cl.SchemaByVersion(context.Background(), side.subject, 1)
				if err != nil || ss.ID != id {
					t.Fatalf("%s version 1: id %d (%v), the record's %d", side.subject, ss.ID, err, id)
				}
				switch format {
				case config.FormatProtobuf:
					p, err := connectformat.NewProtobuf(side.s)
					if err != nil {
						t.Fatal(err)
					}
					if got.Type != sr.TypeProtobuf || got.Schema != p.Text {
						t.Fatalf("%s: registered %s\n%s\nwant the Connect schema's\n%s", side.subject, got.Type, got.Schema, p.Text)
					}
					var refs []string
					for _, r := range got.References {
						refs = append(refs, r.Name+"="+r.Subject)
						if len(reg.Versions(r.Subject)) != 1 {
							t.Errorf("reference %s: subject not registered", r.Subject)
						}
					}
					var want []string
					for _, imp := range p.Imports {
						want = append(want, imp+"="+imp)
					}
					if side.s == vs && len(want) == 0 {
						t.Fatal("the value schema imports nothing: the numeric column should import confluent/type/decimal.proto")
					}
					if strings.Join(refs, ",") != strings.Join(want, ",") {
						t.Errorf("%s: references %v, want each import under its own subject %v", side.subject, refs, want)
					}
					m := dynamicpb.NewMessage(p.Message)
					if err := proto.Unmarshal(payload, m); err != nil {
						t.Fatal(err)
					}
					if side.s == vs {
						after := m.Get(p.Message.Fields().ByName("after")).Message()
						if i := after.Get(after.Descriptor().Fields().ByName("i")).Int(); i != 123456 {
							t.Errorf("after.i = %d, want 123456", i)
						}
						if op := m.Get(p.Message.Fields().ByName("op")).String(); op != "c" {
							t.Errorf("op = %q", op)
						}
					} else if pk := m.Get(p.Message.Fields().ByName("pk")).Int(); pk != 7 {
						t.Errorf("key pk = %d, want 7", pk)
					}
				case config.FormatJSONSchema:
					j, err := connectformat.NewJSONSchema(side.s)
					if err != nil {
						t.Fatal(err)
					}
					if got.Type != sr.TypeJSON || got.Schema != string(j.Document) || len(got.References) != 0 {
						t.Fatalf("%s: registered %s %v\n%s\nwant the Connect schema's\n%s", side.subject, got.Type, got.References, got.Schema, j.Document)
					}
					var v struct {
						PK    int64 `json:"pk"`
						Op    string
						After struct{ I int64 }
					}
					if err := json.Unmarshal(payload, &v); err != nil {
						t.Fatal(err)
					}
					if side.s == vs && (v.Op != "c" || v.After.I != 123456) || side.s == ks && v.PK != 7 {
						t.Errorf("%s payload %s", side.subject, payload)
					}
				}
			}
			before := reg.TotalRequests()
			upd, _, err := w.Change(unit, topic, sp, chs[2], now, true, false)
			if err != nil {
				t.Fatal(err)
			}
			if n := reg.TotalRequests() - before; n != 0 {
				t.Errorf("the second change of the same schemas asked the registry %d times", n)
			}
			if id1, _ := decodeFrame(t, format, rec.Value); func() int { id2, _ := decodeFrame(t, format, upd.Value); return id2 }() != id1 {
				t.Error("the update carries another value schema id")
			}
			del, ts, err := w.Change(unit, topic, sp, chs[3], now, true, true)
			if err != nil {
				t.Fatal(err)
			}
			if del.Value == nil || ts == nil || ts.Value != nil || ts.Key == nil {
				t.Fatalf("delete %v, tombstone %+v: want a value, then a key with no value", del.Value, ts)
			}
			ev := &schema.TxEvent{Status: schema.TxEnd, Xid: 771, LSN: 0x2008, CommitTime: time.UnixMilli(1767323045000),
				EventCount: 5, Collections: []schema.CollectionCount{{Name: "public.numeric_table", Count: 5}}}
			end, err := w.TxEvent(unit, "shop.transaction", &schema.Tx{Xid: 771, CommitLSN: 0x2000}, ev)
			if err != nil {
				t.Fatal(err)
			}
			id, _ := decodeFrame(t, format, end.Value)
			if ss, err := cl.SchemaByVersion(context.Background(), "shop.transaction-value", 1); err != nil || ss.ID != id {
				t.Errorf("shop.transaction-value: %v %v, the END record's id %d", ss, err, id)
			}
			// A schema change and a heartbeat: written with their Connect
			// schemas as the changes are (the Avro path registers theirs too).
			commit := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			sc, err := w.SchemaChange(unit, "shop", &schema.SchemaChange{Type: schema.SchemaChangeAlter, DDL: "ALTER TABLE a ADD c int",
				Table: schema.DDLTable{Schema: "public", Table: "a"}, Xid: 9, LSN: 0x3000, CommitTime: commit, Now: commit}, 0x3000, 0)
			if err != nil {
				t.Fatal(err)
			}
			hb, err := w.Heartbeat(unit, "__debezium-heartbeat.shop", &HeartbeatFormat{prefix: "shop"}, &schema.Change{Op: schema.OpMessage, LSN: 0x3100})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []struct {
				subject string
				b       []byte
			}{{"shop-key", sc.Key}, {"shop-value", sc.Value}, {"__debezium-heartbeat.shop-key", hb.Key}, {"__debezium-heartbeat.shop-value", hb.Value}} {
				id, _ := decodeFrame(t, format, r.b)
				if ss, err := cl.SchemaByVersion(context.Background(), r.subject, 1); err != nil || ss.ID != id {
					t.Errorf("%s: %v %v, the record's id %d", r.subject, ss.ID, err, id)
				}
			}
		})
	}
}

func decodeFrame(t *testing.T, format string, b []byte) (int, []byte) {
	t.Helper()
	if format == config.FormatProtobuf {
		id, index, payload, err := connectformat.DecodeProtobufFrame(b)
		if err != nil || len(index) != 1 || index[0] != 0 {
			t.Fatalf("frame %x: index %v, %v", b, index, err)
		}
		return id, payload
	}
	id, payload, err := connectformat.DecodeJSONFrame(b)
	if err != nil {
		t.Fatal(err)
	}
	return id, payload
}

// TestProtobufAndJSONSchemaEvolveFollowsThePolicy: at a DDL, the new
// shape's Protobuf or JSON Schema schema is put to the registry's check
// (evolution_view.go) as Avro's is: the column added is refused (srtest
// judges no PROTOBUF or JSON change under BACKWARD), and park returns the
// *SchemaEvolutionError naming the subject and the DDL; new_subject
// registers the new schema, of its type, under <topic>-value-v2; force
// registers it as the subject's second version and puts BACKWARD back.
func TestProtobufAndJSONSchemaEvolveFollowsThePolicy(t *testing.T) {
	for _, format := range []string{config.FormatProtobuf, config.FormatJSONSchema} {
		for _, policy := range []string{config.EvolutionPark, config.EvolutionNewSubject, config.EvolutionForce} {
			t.Run(format+"/"+policy, func(t *testing.T) {
				reg := srtest.New(t)
				cfg := config.DefaultConfig()
				cfg.Name = "shop"
				cfg.Format.Key, cfg.Format.Value = format, format
				cfg.Format.SchemaRegistry.URL = reg.URL()
				cfg.Format.SchemaRegistry.SchemaEvolution = policy
				cfg.ApplyDefaults()
				cfg.Kafka.TopicPrefix = "shop"
				naming, err := cfg.TopicNaming()
				if err != nil {
					t.Fatal(err)
				}
				r, err := NewRegistry(cfg.Format.SchemaRegistry, zap.NewNop())
				if err != nil {
					t.Fatal(err)
				}
				f := NewFormats(cfg.Format, EncoderConfig(&cfg, "inventory", naming, nil, nil), r, naming, 1<<20, zap.NewNop())
				w, tracker := testWriter(f)
				topic := "shop.public.numeric_table"
				ch := viewChanges()[0]
				sp := schema.NewPlan(f.SchemaConfig(), ch.Relation)
				if _, _, err := w.Change(tracker.Begin(), topic, sp, ch, time.Now(), true, false); err != nil {
					t.Fatal(err)
				}
				rel := *ch.Relation
				rel.Columns = append(append([]schema.Column(nil), rel.Columns...), schema.Column{Name: "note", TypeOID: 25, TypeMod: -1})
				next := schema.NewPlan(f.SchemaConfig(), &rel)
				ddl := "ALTER TABLE numeric_table ADD COLUMN note text"
				err = w.Codec.Evolve(context.Background(), "public.numeric_table", topic, next, ddl)
				wantType := map[string]sr.SchemaType{config.FormatProtobuf: sr.TypeProtobuf, config.FormatJSONSchema: sr.TypeJSON}[format]
				cl, cerr := sr.NewClient(sr.URLs(reg.URL()))
				if cerr != nil {
					t.Fatal(cerr)
				}
				latest := func(subject string) sr.SubjectSchema {
					t.Helper()
					ss, err := cl.SchemaByVersion(context.Background(), subject, -1)
					if err != nil {
						t.Fatalf("%s: %v", subject, err)
					}
					return ss
				}
				switch policy {
				case config.EvolutionPark:
					var se *SchemaEvolutionError
					if !errors.As(err, &se) || se.Subject != topic+"-value" || se.DDL != ddl || !strings.Contains(se.Message, "NONE") {
						t.Fatalf("Evolve = %v, want the *SchemaEvolutionError of %s-value with the registry's reason", err, topic)
					}
					if !fault.TableFault(err) {
						t.Errorf("%v does not park only the table", err)
					}
					if v := reg.Versions(topic + "-key"); len(v) != 1 {
						t.Errorf("the key (unchanged) has versions %v", v)
					}
				case config.EvolutionNewSubject:
					if err != nil {
						t.Fatal(err)
					}
					if ss := latest(topic + "-value-v2"); ss.Type != wantType || !strings.Contains(ss.Schema.Schema, "note") {
						t.Errorf("%s-value-v2: %s %s", topic, ss.Type, ss.Schema.Schema)
					}
				case config.EvolutionForce:
					if err != nil {
						t.Fatal(err)
					}
					if ss := latest(topic + "-value"); ss.Version != 2 || ss.Type != wantType || !strings.Contains(ss.Schema.Schema, "note") {
						t.Errorf("%s-value latest: version %d %s %s", topic, ss.Version, ss.Type, ss.Schema.Schema)
					}
					if l := reg.Compatibility(topic + "-value"); l != srtest.Backward {
						t.Errorf("the level after force: %s", l)
					}
				}
			})
		}
	}
}

// BenchmarkRegisteredFormats is the cost of one change record (key and
// value, a 10-column row with a decimal) in each format beside plain JSON:
// Writer.Change with the schemas registered already (the steady state).
func BenchmarkRegisteredFormats(b *testing.B) {
	ch := viewChanges()[0]
	now := time.Now()
	for _, format := range []string{config.FormatJSON, config.FormatAvro, config.FormatProtobuf, config.FormatJSONSchema} {
		b.Run(format, func(b *testing.B) {
			var reg *srtest.Registry
			if format != config.FormatJSON {
				reg = srtest.New(b)
			}
			f := chainTestFormats(b, format, false, reg, nil, nil)
			w, tracker := testWriter(f)
			unit := tracker.Begin()
			topic := "shop.public.numeric_table"
			sp := schema.NewPlan(f.SchemaConfig(), ch.Relation)
			if err := w.Codec.Prepare(context.Background(), topic, sp); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for range b.N {
				rec, _, err := w.Change(unit, topic, sp, ch, now, true, false)
				if err != nil {
					b.Fatal(err)
				}
				w.acks.pool.put(rec)
			}
		})
	}
}

// TestProtobufRegistrationRefusedWithoutADDLCheckFollowsThePolicy: a
// registration the registry refuses as incompatible (409) where no DDL
// was checked before it (a shape changed while mooncdc was stopped) parks
// the table under park, and under new_subject and force is registered as
// the policy says, the record written with that id (as
// Codec.evolveRefused does for Avro). The key is Protobuf (no imports, so
// its registration is the first request), the value JSON.
func TestProtobufRegistrationRefusedWithoutADDLCheckFollowsThePolicy(t *testing.T) {
	for _, policy := range []string{config.EvolutionPark, config.EvolutionNewSubject, config.EvolutionForce} {
		t.Run(policy, func(t *testing.T) {
			reg := srtest.New(t)
			cfg := config.DefaultConfig()
			cfg.Name = "shop"
			cfg.Format.Key = config.FormatProtobuf
			cfg.Format.SchemaRegistry.URL = reg.URL()
			cfg.Format.SchemaRegistry.SchemaEvolution = policy
			cfg.ApplyDefaults()
			cfg.Kafka.TopicPrefix = "shop"
			naming, err := cfg.TopicNaming()
			if err != nil {
				t.Fatal(err)
			}
			r, err := NewRegistry(cfg.Format.SchemaRegistry, zap.NewNop())
			if err != nil {
				t.Fatal(err)
			}
			f := NewFormats(cfg.Format, EncoderConfig(&cfg, "inventory", naming, nil, nil), r, naming, 1<<20, zap.NewNop())
			w, tracker := testWriter(f)
			topic := "shop.public.numeric_table"
			ch := viewChanges()[0]
			sp := schema.NewPlan(f.SchemaConfig(), ch.Relation)
			reg.FailNextOn(srtest.EndpointRegister, 1, 409)
			rec, _, err := w.Change(tracker.Begin(), topic, sp, ch, time.Now(), true, false)
			if policy == config.EvolutionPark {
				var inc *SchemaIncompatibleError
				if !errors.As(err, &inc) || !fault.TableFault(err) {
					t.Fatalf("Change = %v, want the table parked on the refusal", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			id, _ := decodeFrame(t, config.FormatProtobuf, rec.Key)
			subject := map[string]string{config.EvolutionNewSubject: topic + "-key-v2", config.EvolutionForce: topic + "-key"}[policy]
			if v := reg.Versions(subject); len(v) != 1 {
				t.Fatalf("%s: versions %v (subjects %v)", subject, v, reg.Subjects())
			}
			cl, err := sr.NewClient(sr.URLs(reg.URL()))
			if err != nil {
				t.Fatal(err)
			}
			if ss, err := cl.SchemaByVersion(context.Background(), subject, 1); err != nil || ss.ID != id {
				t.Errorf("%s version 1: %v %v, the record's id %d", subject, ss.ID, err, id)
			}
		})
	}
}

// TestProtobufNameThatIsNoIdentifierParksTheTable: a topic prefix with
// '-' makes schema names (my-shop.public.numeric_table.Value) that are no
// Protobuf package: the record's table parks, naming the cause, as
// ProtobufData fails with scrub.invalid.names=false (its default); nothing
// is registered or written.
func TestProtobufNameThatIsNoIdentifierParksTheTable(t *testing.T) {
	reg := srtest.New(t)
	cfg := config.DefaultConfig()
	cfg.Name = "shop"
	cfg.Format.Value = config.FormatProtobuf
	cfg.Format.SchemaRegistry.URL = reg.URL()
	cfg.ApplyDefaults()
	cfg.Kafka.TopicPrefix = "my-shop"
	naming, err := cfg.TopicNaming()
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(cfg.Format.SchemaRegistry, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	f := NewFormats(cfg.Format, EncoderConfig(&cfg, "inventory", naming, nil, nil), r, naming, 1<<20, zap.NewNop())
	w, tracker := testWriter(f)
	ch := viewChanges()[0]
	sp := schema.NewPlan(f.SchemaConfig(), ch.Relation)
	_, _, err = w.Change(tracker.Begin(), "my-shop.public.numeric_table", sp, ch, time.Now(), true, false)
	if err == nil || !fault.TableFault(err) || !strings.Contains(err.Error(), "not a valid Protobuf schema") {
		t.Fatalf("Change = %v, want the table parked on the invalid name", err)
	}
	if s := reg.Subjects(); len(s) != 0 {
		t.Errorf("registered %v", s)
	}
}

// TestJSONSchemaAdditionalPropertiesFalseClosesTheObjects:
// format.json_schema_additional_properties false is JsonSchemaConverter's
// object.additional.properties=false: the registered document is
// JsonSchemaData's with "additionalProperties": false on every struct
// (JsonSchemaData.java:920-922 at schema-registry 794611bd86d), the one a
// registry's BACKWARD check accepts a column added to; the default keeps
// them open, as the converter's.
func TestJSONSchemaAdditionalPropertiesFalseClosesTheObjects(t *testing.T) {
	for _, open := range []bool{true, false} {
		reg := srtest.New(t)
		cfg := config.DefaultConfig()
		cfg.Name = "shop"
		cfg.Format.Value = config.FormatJSONSchema
		cfg.Format.JSONSchemaAdditionalProperties = open
		cfg.Format.SchemaRegistry.URL = reg.URL()
		cfg.ApplyDefaults()
		cfg.Kafka.TopicPrefix = "shop"
		naming, err := cfg.TopicNaming()
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewRegistry(cfg.Format.SchemaRegistry, zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		f := NewFormats(cfg.Format, EncoderConfig(&cfg, "inventory", naming, nil, nil), r, naming, 1<<20, zap.NewNop())
		w, tracker := testWriter(f)
		ch := viewChanges()[0]
		sp := schema.NewPlan(f.SchemaConfig(), ch.Relation)
		rec, _, err := w.Change(tracker.Begin(), "shop.public.numeric_table", sp, ch, time.Now(), true, false)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := decodeFrame(t, config.FormatJSONSchema, rec.Value)
		doc, _ := reg.SchemaByID(id)
		_, vs := sp.ConnectSchemas(ch)
		want, err := connectformat.NewJSONSchemaOptions(vs, connectformat.JSONSchemaOptions{ClosedObjects: !open})
		if err != nil {
			t.Fatal(err)
		}
		if doc != string(want.Document) || strings.Contains(doc, `"additionalProperties":false`) == open {
			t.Errorf("additional properties %v: registered\n%s", open, doc)
		}
	}
}

// TestCloudEventsThroughTheConnectViewAreThePlainEvents: format.value
// cloudevents on the chained path — with a transforms chain, or with a
// protobuf key, which needs the Connect view — writes each value with
// Debezium's CloudEventsConverter as the plain path does (the same bytes
// for a change, with and without data schemas; null for a transaction
// record), not as JsonConverter: the converter runs on the record the
// chain returns (AbstractWorkerSourceTask.convertTransformedRecord).
func TestCloudEventsThroughTheConnectViewAreThePlainEvents(t *testing.T) {
	for _, schemas := range []bool{false, true} {
		for _, via := range []string{"chain", "protobuf key"} {
			t.Run(fmt.Sprintf("%s/schemas=%v", via, schemas), func(t *testing.T) {
				reg := srtest.New(t)
				set := func(c *config.Config) {
					c.Format.Value, c.Format.JSONSchemas = config.FormatCloudEvents, schemas
					c.Format.SchemaRegistry.URL = reg.URL()
				}
				plainF := viewTestFormats(t, set)
				viaF := viewTestFormats(t, func(c *config.Config) {
					set(c)
					if via == "protobuf key" {
						c.Format.Key = config.FormatProtobuf
					}
				})
				if via == "chain" {
					chain, err := transform.Parse(neverApplied)
					if err != nil {
						t.Fatal(err)
					}
					viaF.SetTransforms(&Transforms{Chain: chain})
				} else {
					r, err := NewRegistry(config.SchemaRegistryConfig{URL: reg.URL(), AutoRegister: true, SchemaEvolution: config.EvolutionPark}, zap.NewNop())
					if err != nil {
						t.Fatal(err)
					}
					viaF.Registry = r
				}
				plain, tracker := testWriter(plainF)
				chained, _ := testWriter(viaF)
				if !chained.Codec.Chained() {
					t.Fatal("not on the chained path")
				}
				unit := tracker.Begin()
				topic := "shop.public.numeric_table"
				ch := viewChanges()[0]
				sp := schema.NewPlan(plainF.SchemaConfig(), ch.Relation)
				now := time.UnixMilli(1_700_000_000_000)
				want, _, err := plain.Change(unit, topic, sp, ch, now, true, false)
				if err != nil {
					t.Fatal(err)
				}
				got, _, err := chained.Change(unit, topic, sp, ch, now, true, false)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(want.Value, []byte(`"specversion":"1.0"`)) || !bytes.Equal(got.Value, want.Value) {
					t.Fatalf("value through the view:\n%s\nplain:\n%s", got.Value, want.Value)
				}
				ev := &schema.TxEvent{Status: schema.TxEnd, Xid: 771, LSN: 0x2008, CommitTime: now,
					EventCount: 1, Collections: []schema.CollectionCount{{Name: "public.numeric_table", Count: 1}}}
				end, err := chained.TxEvent(unit, "shop.transaction", &schema.Tx{Xid: 771, CommitLSN: 0x2000}, ev)
				if err != nil {
					t.Fatal(err)
				}
				if end.Value != nil {
					t.Errorf("a transaction record's value %s, want null (CloudEventsConverter.java:264-272)", end.Value)
				}
			})
		}
	}
}
