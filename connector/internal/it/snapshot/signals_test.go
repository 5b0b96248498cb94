package snapshot

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/twmb/franz-go/pkg/kgo"
)

// sendSignal writes a signal as Debezium's KafkaSignalChannel reads it: the
// key is the connector's topic prefix (KafkaSignalChannel.java:104-107,
// v3.6.1.Final), the value {"id":…,"type":…,"data":{…}} (:119-124).
func sendSignal(t *testing.T, addr, topic, key, value string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestSignalsExecuteAFilteredRecopy: an execute-snapshot signal on the
// Kafka signal topic copies the table again, restricted by its
// additional-conditions filter (AbstractSnapshotSignal.java:22-29: the
// data-collections, type, additional-conditions data-collection and
// filter fields): only the matching rows are sent, and no key outside the
// filter is tombstoned. pause-snapshot holds a requested copy until
// resume-snapshot; a signal keyed for another connector is ignored.
func TestSignalsExecuteAFilteredRecopy(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO orders SELECT g, 'a' FROM generate_series(1, 10) g`)
	cfg := e.Config("sg", "public.orders")
	cfg.Signals.KafkaTopic = "sg.signals"
	r := ittest.Start(t, cfg)
	ittest.Consume(t, e.Kafka, 10, "sg.public.orders")
	time.Sleep(time.Second) // the signal consumer starts at the topic's end

	sendSignal(t, e.Kafka, "sg.signals", "other", `{"type":"execute-snapshot","data":{"data-collections":["public.orders"]}}`)
	sendSignal(t, e.Kafka, "sg.signals", "sg", `{"id":"s1","type":"execute-snapshot","data":{"data-collections":["public\\.ord.*"],"type":"INCREMENTAL",`+
		`"additional-conditions":[{"data-collection":"public.orders","filter":"id > 7"}]}}`)
	evs := ittest.Consume(t, e.Kafka, 13, "sg.public.orders")
	wantRecopied(t, evs[10:], 8, 9, 10)

	sendSignal(t, e.Kafka, "sg.signals", "sg", `{"id":"s2","type":"pause-snapshot","data":{}}`)
	time.Sleep(time.Second)
	sendSignal(t, e.Kafka, "sg.signals", "sg", `{"id":"s3","type":"execute-snapshot","data":{"data-collections":["public.orders"],"additional-conditions":[{"data-collection":"public.orders","filter":"id = 1"}]}}`)
	time.Sleep(2 * time.Second)
	if n := len(ittest.Consume(t, e.Kafka, -1, "sg.public.orders")); n != 13 {
		t.Errorf("%d records while paused, want 13 (no copy)", n)
	}
	sendSignal(t, e.Kafka, "sg.signals", "sg", `{"id":"s4","type":"resume-snapshot","data":{}}`)
	evs = ittest.Consume(t, e.Kafka, 14, "sg.public.orders")
	if ev := evs[13]; ev.Op != "r" || ev.After["id"].(float64) != 1 {
		t.Errorf("after resume: %+v, want the read of id 1", ev)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestSignalTableExecutesAFilteredRecopy: a row inserted into the signal
// table (signals.table, Debezium's signal.data.collection) is a signal,
// its three columns the id, the type and the data
// (CommonConnectorConfig.java:2221-2236, SignalRecord.java:46-61 at
// v3.6.1.Final). The table is captured without being listed
// (signalling.adoc:85) and its inserts are written like any table's
// (EventDispatcher.java:313-330: the signal is processed, then the record
// emitted). A row that is no signal is ignored and the stream goes on.
func TestSignalTableExecutesAFilteredRecopy(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO orders SELECT g, 'a' FROM generate_series(1, 10) g`)
	// Debezium's documented signal table (signalling.adoc).
	e.Exec(`CREATE TABLE debezium_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048) NULL)`)
	cfg := e.Config("st", "public.orders")
	cfg.Signals.Table = "public.debezium_signal"
	r := ittest.Start(t, cfg)
	ittest.Consume(t, e.Kafka, 10, "st.public.orders")

	e.Exec(`INSERT INTO debezium_signal VALUES ('b1', 'drop-everything', '{}')`)
	e.Exec(`INSERT INTO debezium_signal VALUES ('s1', 'execute-snapshot', ` +
		`'{"data-collections":["public.orders"],"type":"incremental","additional-conditions":[{"data-collection":"public.orders","filter":"id > 7"}]}')`)
	evs := ittest.Consume(t, e.Kafka, 13, "st.public.orders")
	wantRecopied(t, evs[10:], 8, 9, 10)
	// Handed over, the filter is forgotten: a later copy of the table
	// (after a crash, a slot-loss repair) copies every row.
	r.WaitHandedOver(t)
	if f := r.P.TablePhases()["public.orders"].ResnapshotFilter; f != "" {
		t.Errorf("filter %q kept after the filtered re-copy was handed over", f)
	}

	e.Exec(`INSERT INTO debezium_signal VALUES ('s2', 'pause-snapshot', NULL)`)
	e.Exec(`INSERT INTO debezium_signal VALUES ('s3', 'execute-snapshot', '{"data-collections":["public.orders"],"additional-conditions":[{"data-collection":"public.orders","filter":"id = 1"}]}')`)
	time.Sleep(2 * time.Second)
	if n := len(ittest.Consume(t, e.Kafka, -1, "st.public.orders")); n != 13 {
		t.Errorf("%d records while paused, want 13 (no copy)", n)
	}
	e.Exec(`INSERT INTO debezium_signal VALUES ('s4', 'resume-snapshot', NULL)`)
	evs = ittest.Consume(t, e.Kafka, 14, "st.public.orders")
	if ev := evs[13]; ev.Op != "r" || ev.After["id"].(float64) != 1 {
		t.Errorf("after resume: %+v, want the read of id 1", ev)
	}

	// The signal table's own changes, the ignored row included.
	var ids []string
	for _, ev := range ittest.Consume(t, e.Kafka, 5, "st.public.debezium_signal") {
		if ev.Op != "c" {
			t.Errorf("signal table record %+v, want a create", ev)
			continue
		}
		ids = append(ids, ev.After["id"].(string))
	}
	if !slices.Equal(ids, []string{"b1", "s1", "s2", "s3", "s4"}) {
		t.Errorf("signal table records %v", ids)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// wantRecopied checks that evs are a filtered re-copy's snapshot reads of
// exactly the rows ids, and no tombstone.
func wantRecopied(t *testing.T, evs []ittest.Event, ids ...int) {
	t.Helper()
	var again []int
	for _, ev := range evs {
		if ev.Tombstone || ev.Op != "r" {
			t.Errorf("filtered re-copy wrote %+v", ev)
			continue
		}
		again = append(again, int(ev.After["id"].(float64)))
	}
	sort.Ints(again)
	if !slices.Equal(again, ids) {
		t.Errorf("re-copied ids %v, want %v", again, ids)
	}
}
