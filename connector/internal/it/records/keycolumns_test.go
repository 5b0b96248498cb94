package records

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/offsets"
)

// TestMessageKeyColumnsKeyBothPaths: format.message_key_columns (Debezium's
// message.key.columns, Key.java:91-122 at v3.6.1.Final: the listed
// columns, in the listed order) keys snapshot rows and changes alike, also
// for a table without a primary key; an update of a key column is a
// delete, a tombstone and a create. A key a delete would not carry parks
// that table with the fix, and the other tables flow. A primary key's
// columns come in the constraint's order, as Debezium reads them
// (JdbcConnection.readPrimaryKeyNames by KEY_SEQ, JdbcConnection.java:1441-1451).
func TestMessageKeyColumnsKeyBothPaths(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE events (id int PRIMARY KEY, tenant_id int NOT NULL, event_id int NOT NULL, payload text);
		ALTER TABLE events REPLICA IDENTITY FULL;
		CREATE TABLE logs (a int NOT NULL, b text); ALTER TABLE logs REPLICA IDENTITY FULL;
		CREATE TABLE bad (id int PRIMARY KEY, x int);
		CREATE TABLE ordered (a int, b int, PRIMARY KEY (b, a))`)
	e.Exec(`INSERT INTO events VALUES (1, 10, 100, 'snap'); INSERT INTO logs VALUES (1, 'snap');
		INSERT INTO bad VALUES (1, 1); INSERT INTO ordered VALUES (1, 2)`)
	cfg := e.Config("mk", "public.*")
	cfg.Format.MessageKeyColumns = map[string][]string{
		"public.events": {"event_id", "tenant_id"},
		"public.logs":   {"a"},
		"public.bad":    {"x"},
	}
	r := ittest.StartStreaming(t, cfg)
	deadline := time.Now().Add(30 * time.Second) // for both waits below
	eventually.Succeeds(t, time.Until(deadline), 100*time.Millisecond, func() error {
		if r.P.TablePhases()["public.events"].Phase != "ready" || r.P.TablePhases()["public.logs"].Phase != "ready" {
			return fmt.Errorf("tables not ready: %v", r.P.TablePhases())
		}
		return nil
	})
	e.Exec(`INSERT INTO events VALUES (2, 20, 200, 'live'); UPDATE events SET payload = 'x' WHERE id = 2;
		UPDATE events SET tenant_id = 21 WHERE id = 2; DELETE FROM events WHERE id = 1;
		INSERT INTO logs VALUES (2, 'live'); DELETE FROM logs WHERE a = 1`)

	raw := ittest.ReadRaw(t, e.Kafka, 8, "mk.public.events")
	wantKeys := []string{
		`{"event_id":100,"tenant_id":10}`, // snapshot
		`{"event_id":200,"tenant_id":20}`, // insert
		`{"event_id":200,"tenant_id":20}`, // update
		`{"event_id":200,"tenant_id":20}`, // key change: delete
		`{"event_id":200,"tenant_id":20}`, // its tombstone
		`{"event_id":200,"tenant_id":21}`, // create under the new key
		`{"event_id":100,"tenant_id":10}`, // delete
		`{"event_id":100,"tenant_id":10}`, // tombstone
	}
	for i, w := range wantKeys {
		if got := string(raw[i].Key); got != w {
			t.Errorf("events record %d key %s, want %s", i, got, w)
		}
	}
	if raw[4].Value != nil || raw[7].Value != nil {
		t.Errorf("records 4 and 7 should be tombstones")
	}
	logs := ittest.ReadRaw(t, e.Kafka, 4, "mk.public.logs")
	for i, w := range []string{`{"a":1}`, `{"a":2}`, `{"a":1}`, `{"a":1}`} {
		if got := string(logs[i].Key); got != w {
			t.Errorf("logs record %d key %s, want %s", i, got, w)
		}
	}
	ordered := ittest.ReadRaw(t, e.Kafka, 1, "mk.public.ordered")
	if got := string(ordered[0].Key); got != `{"b":2,"a":1}` {
		t.Errorf("ordered key %s, want the primary key's order {\"b\":2,\"a\":1}", got)
	}
	var bad offsets.Table
	eventually.Succeeds(t, time.Until(deadline), 100*time.Millisecond, func() error {
		if bad = r.P.TablePhases()["public.bad"]; bad.Phase != "errored" || bad.Retry != "resnapshot" { // parked: waits for resnapshot, no retries
			return fmt.Errorf("public.bad is %s (retry %q), want parked: %v", bad.Phase, bad.Retry, bad.LastError)
		}
		return nil
	})
	if !strings.Contains(bad.LastError, `REPLICA IDENTITY FULL`) || !strings.Contains(bad.LastError, `"x"`) {
		t.Errorf("public.bad parked with %q, want the column and the fix", bad.LastError)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestTombstonesOnDeleteOff: format.tombstones_on_delete: false (Debezium's
// tombstones.on.delete, CommonConnectorConfig.java:676-686) writes a delete
// without its tombstone, also for an update that moves a row to another key.
func TestTombstonesOnDeleteOff(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY)`)
	cfg := e.Config("nt", "public.t")
	cfg.Format.TombstonesOnDelete = false
	r := ittest.Start(t, cfg)
	e.Exec(`INSERT INTO t VALUES (1), (2); DELETE FROM t WHERE id = 1; UPDATE t SET id = 3 WHERE id = 2`)
	e.Exec(`INSERT INTO t VALUES (9)`) // the last record
	evs := ittest.Consume(t, e.Kafka, 6, "nt.public.t")
	var ops []string
	for _, ev := range evs {
		if ev.Tombstone {
			ops = append(ops, "tombstone")
		} else {
			ops = append(ops, ev.Op)
		}
	}
	if got := strings.Join(ops, " "); got != "c c d d c c" {
		t.Errorf("records %q, want c c d d c c (no tombstone)", got)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
