package snapshot

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/internal/srtest"
	"github.com/mooncdc/mooncdc/schema"
)

// TestCopyConnectionsEncodeWithTheTablesOnePlan: a table's schema plan is
// made once, with its record plan (record.Plan.WithKey); the copy's
// connections, each with a codec of its own (encoders are not safe for
// concurrent use), register and encode with that one plan at once, write
// the same records and build no plan of their own: ShapeColumn, asked once
// per column when a plan is built, is asked for the table's columns once.
func TestCopyConnectionsEncodeWithTheTablesOnePlan(t *testing.T) {
	reg := srtest.New(t)
	var asked atomic.Int32
	f := avroTestFormatsWith(t, reg, func(enc *schema.Config) {
		enc.ShapeColumn = func(_, _, _ string) (bool, *schema.ColumnRewrite) { asked.Add(1); return true, nil }
	})
	cfg := config.DefaultConfig()
	cfg.ApplyDefaults()
	rel := keyedRelation(7, "orders")
	r := record.NewPlanner(cfg, f.Naming, f.SchemaConfig()).Plan(rel, true)
	r.WithKey(rel, nil) // as copyRows does: describeTable keyed it
	if n := asked.Load(); n != int32(len(rel.Columns)) {
		t.Fatalf("the record plan asked ShapeColumn %d times, want %d (one plan)", n, len(rel.Columns))
	}
	o := &snapshotOut{plan: r.SchemaPlan, topic: r.Topic}
	const conns = 4
	out := make([][]byte, conns)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			c := f.Codec() // a connection's (snapshotOut.writer)
			sp, err := c.PrepareRelaxing(context.Background(), o.topic, o.plan)
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
