package connector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/schema"
)

// markerEvent is a snapshot record's id, source.snapshot and times.
type markerEvent struct {
	After struct {
		ID int `json:"id"`
	} `json:"after"`
	Op     string `json:"op"`
	Source struct {
		Snapshot string `json:"snapshot"`
		TsMs     int64  `json:"ts_ms"`
		TsUs     int64  `json:"ts_us"`
		TsNs     int64  `json:"ts_ns"`
	} `json:"source"`
	TsMs int64 `json:"ts_ms"`
	TsUs int64 `json:"ts_us"`
	TsNs int64 `json:"ts_ns"`
}

func readMarkers(t *testing.T, e *env, n int, topic string) []markerEvent {
	t.Helper()
	var out []markerEvent
	for _, r := range consumeRaw(t, e, n, topic) {
		var ev markerEvent
		if err := json.Unmarshal(r, &ev); err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		out = append(out, ev)
	}
	slices.SortFunc(out, func(a, b markerEvent) int { return a.After.ID - b.After.ID })
	return out
}

// consumeRaw returns the values (payloads) of topic's first n records,
// tombstones left out.
func consumeRaw(t *testing.T, e *env, n int, topic string) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	recs := kafkatest.ReadAll(ctx, t, e.kafka, n, topic)
	if n >= 0 && len(recs) < n {
		t.Fatalf("consumed %d records of %d expected from %s", len(recs), n, topic)
	}
	var out [][]byte
	for _, r := range recs {
		if r = unwrapConnect(t, r); r.Value != nil {
			out = append(out, r.Value)
		}
	}
	return out
}

// TestSnapshotMarkersAsDebeziumOverTablesCopiedInParallel: over an initial
// snapshot of three tables copied in parallel, the snapshot's first row
// says "first" and its last row "last", exactly once each; every other
// table's first row says "first_in_data_collection" and last row
// "last_in_data_collection"; rows between say "true"
// (RelationalSnapshotChangeEventSource.java:1274-1291, and the expectations
// of AbstractChunkedSnapshotTest.java:281-289 and
// AbstractRecordsProducerTest.java:1143-1161). A table added later is a
// snapshot of its own: "first" … "last". Streamed changes say "false"
// (RecordsSnapshotProducerIT.java:262). source.ts_* of a snapshot row is
// the snapshot's time, the envelope's the processing time, each in ms, µs
// and ns (AbstractSourceInfoStructMaker.java:48-51, Envelope.java:257-267).
func TestSnapshotMarkersAsDebeziumOverTablesCopiedInParallel(t *testing.T) {
	e := newEnv(t)
	sizes := map[string]int{"a": 3, "b": 4, "c": 1}
	for tb, n := range sizes {
		e.exec(`CREATE TABLE ` + tb + ` (id int PRIMARY KEY)`)
		e.exec(fmt.Sprintf(`INSERT INTO %s SELECT generate_series(1, %d)`, tb, n))
	}
	before := time.Now()
	cfg := e.config("mk", "public.*")
	cfg.Snapshot.DiscoveryInterval = time.Second
	r := start(t, cfg)

	firsts, lasts := 0, 0
	for tb, n := range sizes {
		evs := readMarkers(t, e, n, "mk.public."+tb)
		for i, ev := range evs {
			m := ev.Source.Snapshot
			switch m {
			case schema.SnapshotFirst:
				firsts++
			case schema.SnapshotLast:
				lasts++
			}
			var want []string
			switch {
			case n == 1:
				want = []string{schema.SnapshotFirst, schema.SnapshotLastInDataCollection, schema.SnapshotLast}
			case i == 0:
				want = []string{schema.SnapshotFirst, schema.SnapshotFirstInDataCollection}
			case i == n-1:
				want = []string{schema.SnapshotLast, schema.SnapshotLastInDataCollection}
			default:
				want = []string{schema.SnapshotTrue}
			}
			if ev.Op != "r" || !slices.Contains(want, m) {
				t.Errorf("%s row %d of %d: op %q snapshot %q, want one of %v", tb, i+1, n, ev.Op, m, want)
			}
			src, env := ev.Source, ev
			if src.TsMs < before.Add(-time.Second).UnixMilli() || src.TsMs > env.TsMs {
				t.Errorf("%s row %d: source.ts_ms %d is not the snapshot's time (test start %d, processed %d)", tb, i+1, src.TsMs, before.UnixMilli(), env.TsMs)
			}
			if src.TsUs/1000 != src.TsMs || src.TsNs/1000 != src.TsUs || env.TsUs/1000 != env.TsMs || env.TsNs/1000 != env.TsUs {
				t.Errorf("%s row %d: ts in ms/µs/ns disagree: source %d %d %d, envelope %d %d %d", tb, i+1,
					src.TsMs, src.TsUs, src.TsNs, env.TsMs, env.TsUs, env.TsNs)
			}
		}
	}
	if firsts != 1 || lasts != 1 {
		t.Errorf("the initial snapshot has %d rows marked first and %d marked last, want 1 and 1", firsts, lasts)
	}

	// A table created later is copied as a snapshot of its own.
	e.exec(`CREATE TABLE d (id int PRIMARY KEY)`)
	e.exec(`INSERT INTO d SELECT generate_series(1, 3)`)
	late := readMarkers(t, e, 3, "mk.public.d")
	if got := []string{late[0].Source.Snapshot, late[1].Source.Snapshot, late[2].Source.Snapshot}; !slices.Equal(got,
		[]string{schema.SnapshotFirst, schema.SnapshotTrue, schema.SnapshotLast}) {
		t.Errorf("a table added later: snapshot markers %v, want [first true last]", got)
	}
	r.waitHandedOver(t)

	e.exec(`INSERT INTO a VALUES (100)`)
	evs := readMarkers(t, e, 4, "mk.public.a")
	if s := evs[3].Source.Snapshot; evs[3].Op != "c" || s != schema.SnapshotFalse {
		t.Errorf("a streamed insert: op %q snapshot %q, want c and false", evs[3].Op, s)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}
