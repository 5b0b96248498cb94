package connector

import (
	"errors"
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
	pl := newPlanner(cfg, naming, schema.Config{Name: "shop"})
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
		r := pl.plan(rel, tc.captured)
		if r.name != "public."+tc.table || r.topic != tc.topic || r.routed != tc.routed || r.outbox != tc.outbox ||
			r.signals != tc.signals || r.skip == tc.captured || r.ownTopic() != tc.ownTopic {
			t.Errorf("%s: %+v", tc.table, r)
		}
		if r.rel != rel {
			t.Errorf("%s: the plan encodes with another relation before withKey", tc.table)
		}
	}

	r := pl.plan(testRelation(7, "customers"), true)
	keyed, _ := firstColumnKeyer{}.keyed(r.rel)
	keyed.Columns[1].NotNull = true
	r.withKey(keyed, nil)
	if r.rel != keyed || r.keyErr != nil || r.nulls == nil || len(r.nulls.notNull) != 1 {
		t.Errorf("withKey: %+v", r)
	}
	// The schema plan is made with the record plan, of the relation it
	// encodes with; a copy's connections share it (copy_rows.go).
	if r.splan == nil || r.splan.Relation() != keyed {
		t.Errorf("withKey made no schema plan of the keyed relation: %+v", r.splan)
	}
	r = pl.plan(testRelation(7, "customers"), true)
	kerr := &keyRuleError{errors.New("no such column")}
	r.withKey(nil, kerr)
	if !errors.Is(r.keyErr, kerr) || r.rel == nil {
		t.Errorf("withKey with a key error: %+v", r)
	}
}
