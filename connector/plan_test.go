package connector

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/srtest"
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

// TestCopyConnectionsEncodeWithTheTablesOnePlan: a table's schema plan is
// made once, with its record plan (withKey); the copy's connections, each
// with a codec of its own (encoders are not safe for concurrent use),
// register and encode with that one plan at once, write the same records
// and build no plan of their own: ShapeColumn, asked once per column when
// a plan is built, is asked for the table's columns once.
func TestCopyConnectionsEncodeWithTheTablesOnePlan(t *testing.T) {
	reg := srtest.New(t)
	f := avroTestFormats(t, reg)
	var asked atomic.Int32
	f.enc.ShapeColumn = func(_, _, _ string) (bool, *schema.ColumnRewrite) { asked.Add(1); return true, nil }
	cfg := config.DefaultConfig()
	cfg.ApplyDefaults()
	rel := keyedRelation(7, "orders")
	r := newPlanner(cfg, f.naming, f.enc).plan(rel, true)
	r.withKey(rel, nil) // as copyRows does: describeTable keyed it
	if n := asked.Load(); n != int32(len(rel.Columns)) {
		t.Fatalf("the record plan asked ShapeColumn %d times, want %d (one plan)", n, len(rel.Columns))
	}
	o := &snapshotOut{plan: r.splan, topic: r.topic}
	const conns = 4
	out := make([][]byte, conns)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			c := f.codec() // a connection's (snapshotOut.writer)
			sp, err := c.prepareRelaxing(context.Background(), o.topic, o.plan)
			if err != nil || sp != o.plan {
				t.Errorf("connection %d: plan %p, err %v; want the table's %p", i, sp, err, o.plan)
				return
			}
			for n := range 50 {
				ch := &schema.Change{Op: schema.OpRead, Relation: sp.Relation(), LSN: 1, Snapshot: schema.SnapshotTrue,
					After: schema.Tuple{{Kind: schema.ValueText, Data: []byte(strconv.Itoa(n))}, {Kind: schema.ValueText, Data: []byte("v")}}}
				k, _, err := c.AppendKey(nil, sp, ch)
				if err == nil {
					var v []byte
					v, err = c.AppendValue(nil, sp, ch, time.UnixMilli(1))
					out[i] = append(append(out[i], k...), v...)
				}
				if err != nil {
					t.Errorf("connection %d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := asked.Load(); n != int32(len(rel.Columns)) {
		t.Errorf("ShapeColumn asked %d times after the copy's connections encoded, want %d: a connection built a plan", n, len(rel.Columns))
	}
	for i := 1; i < conns; i++ {
		if !bytes.Equal(out[i], out[0]) {
			t.Errorf("connection %d wrote other records than connection 0", i)
		}
	}
}
