package snapshot

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/internal/srtest"
	"github.com/mooncdc/mooncdc/offsets"
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

func readMarkers(t *testing.T, e *ittest.Env, n int, topic string) []markerEvent {
	t.Helper()
	var out []markerEvent
	for _, r := range ittest.ConsumeRaw(t, e, n, topic) {
		var ev markerEvent
		if err := json.Unmarshal(r, &ev); err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		out = append(out, ev)
	}
	slices.SortFunc(out, func(a, b markerEvent) int { return a.After.ID - b.After.ID })
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
	e := ittest.NewEnv(t)
	sizes := map[string]int{"a": 3, "b": 4, "c": 1}
	for tb, n := range sizes {
		e.Exec(`CREATE TABLE ` + tb + ` (id int PRIMARY KEY)`)
		e.Exec(fmt.Sprintf(`INSERT INTO %s SELECT generate_series(1, %d)`, tb, n))
	}
	before := time.Now()
	cfg := e.Config("mk", "public.*")
	cfg.Snapshot.DiscoveryInterval = time.Second
	r := ittest.Start(t, cfg)

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
	e.Exec(`CREATE TABLE d (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO d SELECT generate_series(1, 3)`)
	late := readMarkers(t, e, 3, "mk.public.d")
	if got := []string{late[0].Source.Snapshot, late[1].Source.Snapshot, late[2].Source.Snapshot}; !slices.Equal(got,
		[]string{schema.SnapshotFirst, schema.SnapshotTrue, schema.SnapshotLast}) {
		t.Errorf("a table added later: snapshot markers %v, want [first true last]", got)
	}
	r.WaitHandedOver(t)

	e.Exec(`INSERT INTO a VALUES (100)`)
	evs := readMarkers(t, e, 4, "mk.public.a")
	if s := evs[3].Source.Snapshot; evs[3].Op != "c" || s != schema.SnapshotFalse {
		t.Errorf("a streamed insert: op %q snapshot %q, want c and false", evs[3].Op, s)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// markersInOrder returns topic's first n snapshot markers in the order
// the records were written.
func markersInOrder(t *testing.T, e *ittest.Env, n int, topic string) []markerEvent {
	t.Helper()
	var out []markerEvent
	for _, r := range ittest.ConsumeRaw(t, e, n, topic) {
		var ev markerEvent
		if err := json.Unmarshal(r, &ev); err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		out = append(out, ev)
	}
	return out
}

// wantRunMarkers checks that copies (table: its rows in topic order) are
// one snapshot in Debezium's sense: one "first" and one "last" over all
// of them, every other table's first and last rows
// first_in_data_collection and last_in_data_collection, "true" between
// (RelationalSnapshotChangeEventSource.java:1274-1291, v3.6.1.Final).
func wantRunMarkers(t *testing.T, what string, copies map[string][]markerEvent) {
	t.Helper()
	firsts, lasts := 0, 0
	for tb, evs := range copies {
		n := len(evs)
		for i, ev := range evs {
			m := ev.Source.Snapshot
			firsts += btoi(m == schema.SnapshotFirst)
			lasts += btoi(m == schema.SnapshotLast)
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
				t.Errorf("%s: %s row %d of %d: op %q snapshot %q, want r and one of %v", what, tb, i+1, n, ev.Op, m, want)
			}
		}
	}
	if firsts != 1 || lasts != 1 {
		t.Errorf("%s: %d rows marked first and %d marked last, want 1 and 1", what, firsts, lasts)
	}
}

// wantIncremental checks that every row of evs is an incremental
// snapshot's read.
func wantIncremental(t *testing.T, what string, evs []markerEvent) {
	t.Helper()
	for i, ev := range evs {
		if ev.Op != "r" || ev.Source.Snapshot != schema.SnapshotIncremental {
			t.Errorf("%s: row %d of %d (id %d): op %q snapshot %q, want r and incremental", what, i+1, len(evs), ev.After.ID, ev.Op, ev.Source.Snapshot)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestRecopyMarkersFollowTheSnapshotType: the rows of a re-copy say what
// Debezium's snapshot of the signal's type says. An execute-snapshot of
// type incremental, the default (AbstractSnapshotSignal.java:36-40,
// v3.6.1.Final), is an incremental snapshot, whose every row says
// "incremental": the marker is set before a window's rows are sent
// (AbstractIncrementalSnapshotChangeEventSource.java:170-178,
// CommonOffsetContext.java:91-95) and no first or last is resolved for
// them. `mooncdc resnapshot` is the re-copy a Debezium user asks for with
// that signal: "incremental" too. A blocking execute-snapshot runs the
// initial snapshot's code (ExecuteSnapshot.java:81-83,
// ChangeEventSourceCoordinator.java:256-270, CommonOffsetContext.java:73-78):
// first … last over the signal's tables, as the initial snapshot, whose
// markers do not change. The type is stored with the request: a re-copy
// (`mooncdc resnapshot`: the blocking copy, marked incremental) that
// crashes after its rows and is copied again at the restart still says
// "incremental". The execute-snapshot without a type runs mooncdc's
// incremental snapshot (docs/incremental-snapshots.md), whose rows say it
// too. JSON with schemas, so that Kafka Connect's JsonConverter checks the
// marker against the schema's allowed values.
func TestRecopyMarkersFollowTheSnapshotType(t *testing.T) {
	e := ittest.NewEnv(t)
	sizes := map[string]int{"a": 3, "b": 2}
	for tb, n := range sizes {
		e.Exec(`CREATE TABLE ` + tb + ` (id int PRIMARY KEY)`)
		e.Exec(fmt.Sprintf(`INSERT INTO %s SELECT generate_series(1, %d)`, tb, n))
	}
	cfg := e.Config("rm", "public.a", "public.b")
	cfg.Format.JSONSchemas = true
	cfg.Signals.KafkaTopic = "rm.signals"
	r := ittest.Start(t, cfg)
	// copies returns each table's rows of the k-th copy (0: the initial
	// snapshot), in topic order.
	copies := func(k int, tables ...string) map[string][]markerEvent {
		out := map[string][]markerEvent{}
		for _, tb := range tables {
			n := sizes[tb]
			out[tb] = markersInOrder(t, e, (k+1)*n, "rm.public."+tb)[k*n : (k+1)*n]
		}
		return out
	}
	wantRunMarkers(t, "initial snapshot", copies(0, "a", "b"))
	time.Sleep(time.Second) // the signal consumer starts at the topic's end

	sendSignal(t, e.Kafka, "rm.signals", "rm", `{"id":"i1","type":"execute-snapshot","data":{"data-collections":["public\\.(a|b)"]}}`)
	for tb, evs := range copies(1, "a", "b") {
		wantIncremental(t, "execute-snapshot without a type, "+tb, evs)
	}
	r.WaitHandedOver(t)

	sendSignal(t, e.Kafka, "rm.signals", "rm", `{"id":"b1","type":"execute-snapshot","data":{"data-collections":["public.a","public.b"],"type":"BLOCKING"}}`)
	wantRunMarkers(t, "blocking execute-snapshot", copies(2, "a", "b"))
	r.WaitHandedOver(t)

	ittest.Resnapshot(t, "rm", e, r, "public.a")
	wantIncremental(t, "mooncdc resnapshot", copies(3, "a")["a"])
	r.WaitHandedOver(t)

	// A re-copy of b marked incremental (`mooncdc resnapshot`) crashes once
	// its rows are in Kafka, before its handover: the restart copies b
	// again, still incremental.
	var crashed atomic.Bool
	r.P.Hooks().Set(func(point, table string) {
		if point == connector.HookCopied && table == "public.b" && crashed.CompareAndSwap(false, true) {
			r.P.Abort()
			time.Sleep(300 * time.Millisecond) // let the abort reach the copy before it hands over
		}
	})
	ittest.Resnapshot(t, "rm", e, r, "public.b")
	select {
	case err := <-r.Done:
		r.Done <- err // for the cleanup
	case <-time.After(60 * time.Second):
		t.Fatal("no crash during the re-copy")
	}
	if !crashed.Load() {
		t.Fatal("the pipeline stopped before the re-copy crashed")
	}
	if ph := r.P.TablePhases()["public.b"]; ph.Phase != "copying" || ph.ResnapshotType != offsets.ResnapshotIncremental {
		t.Fatalf("crashed re-copy of b: phase %q resnapshot_type %q, want copying and incremental", ph.Phase, ph.ResnapshotType)
	}
	r = ittest.Start(t, cfg)
	wantIncremental(t, "the crashed incremental re-copy", copies(3, "b")["b"])
	wantIncremental(t, "the incremental re-copy again after the restart", copies(4, "b")["b"])
	if ph := r.P.TablePhases()["public.b"]; ph.ResnapshotType != "" {
		t.Errorf("resnapshot_type %q kept after the re-copy was handed over", ph.ResnapshotType)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestIncrementalMarkerInAvroAndTheFlatEnvelope: an incremental re-copy's
// rows say "incremental" in Avro (the full envelope's source.snapshot, an
// io.debezium.data.Enum string, SchemaFactory.java:144-148 at
// v3.6.1.Final) and in the flat envelope's added source field and header
// (ExtractNewRecordState's __snapshot, AbstractExtractNewRecordState.java
// :194, 222-223). The signal comes from a signal table both pipelines
// capture, so one row re-copies for both.
func TestIncrementalMarkerInAvroAndTheFlatEnvelope(t *testing.T) {
	e := ittest.NewEnv(t)
	reg := srtest.New(t)
	e.Exec(`CREATE TABLE public.items (id int PRIMARY KEY, name text)`)
	e.Exec(`INSERT INTO items VALUES (1, 'a'), (2, 'b')`)
	e.Exec(`CREATE TABLE debezium_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048) NULL)`)
	av := ittest.AvroConfig(e, reg, "incav", "public.items")
	av.Signals.Table = "public.debezium_signal"
	fl := ittest.FlatConfig(e, "incfl", "rewrite")
	fl.Format.Flat.AddFields = append(fl.Format.Flat.AddFields, "snapshot")
	fl.Format.Flat.AddHeaders = []string{"source.snapshot:snap"}
	fl.Signals.Table = "public.debezium_signal"
	ra, rf := ittest.Start(t, av), ittest.Start(t, fl)
	ittest.ReadRaw(t, e.Kafka, 2, "incav.public.items")
	ittest.ReadRaw(t, e.Kafka, 2, "incfl.public.items")
	e.Exec(`INSERT INTO debezium_signal VALUES ('i1', 'execute-snapshot', '{"data-collections":["public.items"]}')`)

	for i, rec := range ittest.ReadAvro(t, reg, e.Kafka, 4, "incav.public.items")[2:4] {
		src, _ := rec.Value["source"].(map[string]any)
		if rec.Value["op"] != "r" || src["snapshot"] != schema.SnapshotIncremental {
			t.Errorf("avro re-copy row %d: op %v source.snapshot %v, want r and incremental", i+1, rec.Value["op"], src["snapshot"])
		}
	}
	for i, rec := range ittest.ReadRaw(t, e.Kafka, 4, "incfl.public.items")[2:4] {
		m := ittest.FlatRow(t, rec)
		h, _ := ittest.Header(rec, "__snap")
		if m["__snapshot"] != schema.SnapshotIncremental || h != schema.SnapshotIncremental {
			t.Errorf("flat re-copy row %d: __snapshot %v, header __snap %q, want incremental", i+1, m["__snapshot"], h)
		}
	}
	for _, r := range []*ittest.Running{ra, rf} {
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	}
}
