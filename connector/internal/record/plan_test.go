package record

import (
	"errors"
	"slices"
	"testing"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/schema"
)

// TestRecordPlanDecidesTopicKeyAndEnvelopeOncePerRelation: the planner
// gives a table the topic kafka.routes names (marked routed, so a copy
// tombstones no keys of a shared topic), marks the outbox table (its
// records are events on other topics: no own topic) and the signal table,
// and leaves an uncaptured table without a topic; withKey sets the
// relation to encode with and its NOT NULL plan, or the key error that
// parks the table.
func TestRecordPlanDecidesTopicKeyAndEnvelopeOncePerRelation(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Name = "shop"
	cfg.Kafka.Routes = []config.RouteRule{{Regex: `shop\.public\.orders_(.*)`, Topic: "shop.orders"}}
	cfg.Format.Envelope = config.EnvelopeOutbox
	cfg.Format.Outbox.Table = "public.outbox"
	cfg.Signals.Table = "public.signals"
	cfg.ApplyDefaults()
	naming, err := cfg.TopicNaming()
	if err != nil {
		t.Fatal(err)
	}
	pl := NewPlanner(cfg, naming, schema.Config{Name: "shop"})
	for _, tc := range []struct {
		table                             string
		captured                          bool
		topic                             string
		routed, outbox, signals, ownTopic bool
	}{
		{"customers", true, "shop.public.customers", false, false, false, true},
		{"orders_2024", true, "shop.orders", true, false, false, true},
		{"outbox", true, "shop.public.outbox", false, true, false, false},
		{"signals", true, "shop.public.signals", false, false, true, true},
		{"other", false, "", false, false, false, false},
	} {
		rel := testRelation(7, tc.table)
		r := pl.Plan(rel, tc.captured)
		if r.Name != "public."+tc.table || r.Topic != tc.topic || r.Routed != tc.routed || r.Outbox != tc.outbox ||
			r.Signals != tc.signals || r.Skip == tc.captured || r.OwnTopic() != tc.ownTopic {
			t.Errorf("%s: %+v", tc.table, r)
		}
		if r.Rel != rel {
			t.Errorf("%s: the plan encodes with another relation before withKey", tc.table)
		}
	}

	r := pl.Plan(testRelation(7, "customers"), true)
	keyed := keyedOnFirstColumn(r.Rel)
	keyed.Columns[1].NotNull = true
	r.WithKey(keyed, nil)
	if r.Rel != keyed || r.KeyErr != nil || r.Nulls == nil || len(r.Nulls.NotNull) != 1 {
		t.Errorf("withKey: %+v", r)
	}
	// The schema plan is made with the record plan, of the relation it
	// encodes with; a copy's connections share it (snapshot: copy_rows.go).
	if r.SchemaPlan == nil || r.SchemaPlan.Relation() != keyed {
		t.Errorf("WithKey made no schema plan of the keyed relation: %+v", r.SchemaPlan)
	}
	r = pl.Plan(testRelation(7, "customers"), true)
	kerr := &KeyRuleError{errors.New("no such column")}
	r.WithKey(nil, kerr)
	if !errors.Is(r.KeyErr, kerr) || r.Rel == nil {
		t.Errorf("withKey with a key error: %+v", r)
	}
}

// testRelation is table public.<table> (id int, v text) with oid.
func testRelation(oid uint32, table string) *schema.Relation {
	return &schema.Relation{OID: oid, Schema: "public", Table: table, ReplicaIdentity: 'd', Columns: []schema.Column{
		{Name: "id", TypeOID: 23, TypeMod: -1}, {Name: "v", TypeOID: 25, TypeMod: -1}}}
}

// keyedOnFirstColumn is rel keyed on its first column, as the emitter's
// unit tests' keyer makes it.
func keyedOnFirstColumn(rel *schema.Relation) *schema.Relation {
	out := *rel
	out.Columns = slices.Clone(rel.Columns)
	SetKey(&out, []string{rel.Columns[0].Name})
	return &out
}
